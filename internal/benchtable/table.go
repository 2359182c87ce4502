package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// A row of the table: what it measures, its target, and how one binary's
// medians give its figures.
type row struct {
	measure, target string
	eval            func(m medians) result
}

// result is a row evaluated on one binary's medians.
type result struct {
	text    string // the measured column
	verdict string // against the target
	figs    []fig  // compared with the before binary
}

func f2(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// both formats the wall-time speed ratio and, in parentheses, the CPU one.
func (m medians) both(base, ours string) string {
	return f2(m.speed(base, ours)) + " (CPU " + f2(m.cpu(base, ours)) + ")"
}

// verdict reports whether every value meets the target.
func verdict(ok bool, vs ...float64) string {
	for _, v := range vs {
		if math.IsNaN(v) {
			return "not measured"
		}
	}
	if ok {
		return "met"
	}
	return "**not met**"
}

// paired is the benchmark that alternates requests to a MaxBytesHandler
// server and a Middleware server in one loop; its metric "speed" is
// MaxBytesHandler's time over the Middleware's.
const paired = "MiddlewareVsMaxBytesHandler/size=4KiB"

// decodePaired, followed by a coding, is the benchmark that alternates the
// raw decoder and the bounded Reader in one loop; its metric "speed" is the
// raw decoder's time over the bounded Reader's.
const decodePaired = "DecodePaired/coding="

func fetch(size, client string) string { return "Fetch/size=" + size + "/client=" + client }

// fetchPaired is the benchmark that alternates the stock client's fetch
// and the Transport's (client "bounded": io.ReadAll; "bounded-ReadBody")
// in one loop; its metric "speed" is stock's time over ours.
func fetchPaired(size, client string) string { return "FetchPaired/size=" + size + "/client=" + client }

// fetchSpeed is a fetch's separate-run speed with its CPU figure and the
// paired one, and the figure the verdict uses: the paired one where it was
// measured.
func (m medians) fetchSpeed(size, client string) (string, float64, []fig) {
	sep := m.speed(fetch(size, "stock"), fetch(size, client))
	p := m.metric("speed", fetchPaired(size, client))
	v := p
	if math.IsNaN(p) {
		v = sep
	}
	return fmt.Sprintf("%s (CPU %s; paired %s)", f2(sep), f2(m.cpu(fetch(size, "stock"), fetch(size, client))), f2(p)), v,
		[]fig{m.speedFig("separate", fetch(size, "stock"), fetch(size, client)), m.metricFig("paired", "speed", fetchPaired(size, client))}
}

func mc(n int, h string) string {
	return fmt.Sprintf("MiddlewareClients/size=4KiB/clients=%d/handler=%s", n, h)
}

func mg(h string) string { return "MiddlewareGzip/size=64KiB/handler=" + h }

func fc(n int, c string) string {
	return fmt.Sprintf("FetchClients/size=4KiB/clients=%d/client=%s", n, c)
}

func bomb(c, size string) string { return "BombRejection/coding=" + c + "/size=" + size }

var rows = []row{
	{"whole-body fetch of an 8 MiB gzip JSON body: speed vs stock", ">= 1.5", func(m medians) result {
		t, s8, f := m.fetchSpeed("8MiB", "bounded")
		tr, _, fr := m.fetchSpeed("8MiB", "bounded-ReadBody")
		return result{
			fmt.Sprintf("io.ReadAll %s; ReadBody %s", t, tr),
			verdict(s8 >= 1.5, s8) + " (io.ReadAll, " + pairedNote(m, fetchPaired("8MiB", "bounded")) + ")",
			append(labelled("io.ReadAll ", f), labelled("ReadBody ", fr)...),
		}
	}},
	{"same: bytes allocated vs stock", "<= 0.9", func(m medians) result {
		a8 := m.alloc(fetch("8MiB", "stock"), fetch("8MiB", "bounded"))
		a8r := m.alloc(fetch("8MiB", "stock"), fetch("8MiB", "bounded-ReadBody"))
		return result{
			fmt.Sprintf("io.ReadAll %s; ReadBody %s", f2(a8), f2(a8r)),
			verdict(a8 <= 0.9, a8) + " (io.ReadAll)",
			[]fig{m.allocFig("io.ReadAll", fetch("8MiB", "stock"), fetch("8MiB", "bounded")), m.allocFig("ReadBody", fetch("8MiB", "stock"), fetch("8MiB", "bounded-ReadBody"))},
		}
	}},
	{"whole-body fetch of a 4 KiB gzip JSON body on a kept-alive connection: speed / allocated bytes vs stock", ">= 1.0 / <= 0.5", func(m medians) result {
		t, s4, f := m.fetchSpeed("4KiB", "bounded")
		tr, _, fr := m.fetchSpeed("4KiB", "bounded-ReadBody")
		a4 := m.alloc(fetch("4KiB", "stock"), fetch("4KiB", "bounded"))
		a4r := m.alloc(fetch("4KiB", "stock"), fetch("4KiB", "bounded-ReadBody"))
		figs := labelled("io.ReadAll speed ", f)
		figs = append(figs, m.allocFig("io.ReadAll bytes", fetch("4KiB", "stock"), fetch("4KiB", "bounded")))
		figs = append(figs, labelled("ReadBody speed ", fr)...)
		figs = append(figs, m.allocFig("ReadBody bytes", fetch("4KiB", "stock"), fetch("4KiB", "bounded-ReadBody")))
		return result{
			fmt.Sprintf("io.ReadAll %s / %s; ReadBody %s / %s", t, f2(a4), tr, f2(a4r)),
			"speed " + verdict(s4 >= 1.0, s4) + " (" + pairedNote(m, fetchPaired("4KiB", "bounded")) + "); bytes: io.ReadAll " + verdict(a4 <= 0.5, a4) + ", ReadBody " + verdict(a4r <= 0.5, a4r),
			figs,
		}
	}},
	{"bounded decode vs the raw decoder: gzip / zstd / br", ">= 0.97 each", func(m medians) result {
		var dec []string
		var dv []float64
		var figs []fig
		ok, allPaired := true, true
		for _, c := range []string{"gzip", "zstd", "br"} {
			raw, bounded, pair := "Decode/coding="+c+"/decoder=raw", "Decode/coding="+c+"/decoder=bounded", decodePaired+c
			sep, p := m.speed(raw, bounded), m.metric("speed", pair)
			v := p
			if math.IsNaN(p) {
				v, allPaired = sep, false
			}
			dec = append(dec, fmt.Sprintf("%s (CPU %s; paired %s)", f2(sep), f2(m.cpu(raw, bounded)), f2(p)))
			dv = append(dv, v)
			figs = append(figs, m.speedFig(c, raw, bounded), m.metricFig(c+" paired", "speed", pair))
			ok = ok && v >= 0.97
		}
		v := verdict(ok, dv...) + " (paired)"
		if !allPaired {
			v = verdict(ok, dv...) + " (separate runs where paired is not measured)"
		}
		return result{strings.Join(dec, " / "), v, figs}
	}},
	{"Middleware vs `http.MaxBytesHandler`, 4 KiB identity JSON POST, requests/s", ">= 0.97", func(m medians) result {
		sep := m.speed(mc(1, "MaxBytesHandler"), mc(1, "Middleware"))
		p := m.metric("speed", paired)
		v := verdict(p >= 0.97, p) + " (paired)"
		if math.IsNaN(p) {
			v = verdict(sep >= 0.97, sep) + " (separate runs; paired not measured)"
		}
		return result{
			fmt.Sprintf("%s (CPU %s; paired %s)", f2(sep), f2(m.cpu(mc(1, "MaxBytesHandler"), mc(1, "Middleware"))), f2(p)),
			v,
			[]fig{m.speedFig("separate", mc(1, "MaxBytesHandler"), mc(1, "Middleware")), m.metricFig("paired", "speed", paired)},
		}
	}},
	{"Middleware vs by hand (`http.MaxBytesHandler` + `gzip.NewReader` + `io.ReadAll`), 64 KiB gzip JSON POST: speed / allocation", ">= 1.2, allocation <= 0.5", func(m medians) result {
		gs := m.speed(mg("by-hand"), mg("Middleware"))
		gsr := m.speed(mg("by-hand"), mg("Middleware-ReadBody"))
		ga := m.alloc(mg("by-hand"), mg("Middleware"))
		gar := m.alloc(mg("by-hand"), mg("Middleware-ReadBody"))
		return result{
			fmt.Sprintf("io.ReadAll %s / %s; ReadBody %s / %s", m.both(mg("by-hand"), mg("Middleware")), f2(ga), m.both(mg("by-hand"), mg("Middleware-ReadBody")), f2(gar)),
			"io.ReadAll " + verdict(gs >= 1.2 && ga <= 0.5, gs, ga) + "; ReadBody " + verdict(gsr >= 1.2 && gar <= 0.5, gsr, gar),
			[]fig{
				m.speedFig("io.ReadAll speed", mg("by-hand"), mg("Middleware")),
				m.allocFig("io.ReadAll allocation", mg("by-hand"), mg("Middleware")),
				m.speedFig("ReadBody speed", mg("by-hand"), mg("Middleware-ReadBody")),
				m.allocFig("ReadBody allocation", mg("by-hand"), mg("Middleware-ReadBody")),
			},
		}
	}},
	{"throughput with 1 / 8 / 64 concurrent clients (4 KiB bodies): Transport vs stock; Middleware vs MaxBytesHandler", "no worse than the single-client ratio (within 5%)", func(m medians) result {
		var tr, mwc []string
		var all []float64
		var figs []fig
		trOK, mwOK := true, true
		t1, m1 := m.speed(fc(1, "stock"), fc(1, "bounded")), m.speed(mc(1, "MaxBytesHandler"), mc(1, "Middleware"))
		for _, n := range []int{1, 8, 64} {
			t := m.speed(fc(n, "stock"), fc(n, "bounded"))
			w := m.speed(mc(n, "MaxBytesHandler"), mc(n, "Middleware"))
			tr = append(tr, m.both(fc(n, "stock"), fc(n, "bounded")))
			mwc = append(mwc, m.both(mc(n, "MaxBytesHandler"), mc(n, "Middleware")))
			all = append(all, t, w)
			figs = append(figs, m.speedFig(fmt.Sprintf("Transport %d", n), fc(n, "stock"), fc(n, "bounded")),
				m.speedFig(fmt.Sprintf("Middleware %d", n), mc(n, "MaxBytesHandler"), mc(n, "Middleware")))
			// Within 5% of the single client's ratio counts as no worse:
			// that is the noise of a loaded machine.
			trOK = trOK && t >= 0.95*t1
			mwOK = mwOK && w >= 0.95*m1
		}
		return result{"Transport " + strings.Join(tr, " / ") + "; Middleware " + strings.Join(mwc, " / "), verdict(trOK && mwOK, all...), figs}
	}},
	{"no regression: cost of rejecting a 1 GiB bomb vs a 16 MiB one (1 MiB limit)", "time <= 1.5", func(m medians) result {
		var bs []string
		var bv []float64
		var figs []fig
		ok := true
		for _, c := range []string{"gzip", "zstd"} {
			big, small := bomb(c, "1024MiB"), bomb(c, "16MiB")
			t := m.ratio("sec/op", big, small)
			a := m.ratio("B/op", big, small)
			cp := m.ratio("cpu-sec/op", big, small)
			bs = append(bs, fmt.Sprintf("%s: time %s (CPU %s), bytes %s (%.0f B/op at 1 GiB)", c, f2(t), f2(cp), f2(a), m.metric("B/op", big)))
			bv = append(bv, t)
			figs = append(figs, m.costFig(c+" time", big, small),
				fig{label: c + " bytes", v: a, ci: m.ratioCI("B/op", big, small), lowerBetter: true, exact: true})
			ok = ok && t <= 1.5
		}
		return result{strings.Join(bs, "; "), verdict(ok, bv...), figs}
	}},
}

// writeTable writes the table of after's medians; with before's (not nil)
// each row shows both binaries' figures and the "no regression" verdict.
func writeTable(w io.Writer, after, before medians, beforeName, afterName string) {
	if before == nil {
		fmt.Fprintf(w, "| measure | measured | target | verdict |\n|---|---|---|---|\n")
		for _, r := range rows {
			a := r.eval(after)
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", r.measure, a.text, r.target, a.verdict)
		}
		return
	}
	fmt.Fprintf(w, "| measure | before (%s) | after (%s) | target | verdict (after) | before -> after |\n|---|---|---|---|---|---|\n", beforeName, afterName)
	for _, r := range rows {
		a, b := r.eval(after), r.eval(before)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.measure, b.text, a.text, r.target, a.verdict, regression(b.figs, a.figs))
	}
}

// pairedNote says which figure a fetch verdict used.
func pairedNote(m medians, pairedName string) string {
	if math.IsNaN(m.metric("speed", pairedName)) {
		return "separate runs; paired not measured"
	}
	return "paired"
}

// labelled prefixes the labels of figs.
func labelled(prefix string, figs []fig) []fig {
	out := make([]fig, len(figs))
	for i, f := range figs {
		f.label = prefix + f.label
		out[i] = f
	}
	return out
}
