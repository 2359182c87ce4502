package main

import (
	"bufio"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// stat is one benchmark's benchstat median under one unit, with the
// relative half-width of its 95% confidence interval as benchstat prints
// it (0.07 for "± 7%"). ci is +Inf when benchstat gave no interval (it
// needs at least 6 rounds).
type stat struct{ med, ci float64 }

// medians maps unit ("sec/op", "B/op", a custom metric such as "speed")
// and benchmark name (without the GOMAXPROCS suffix) to the benchstat
// median of one binary's rounds.
type medians map[string]map[string]stat

var procs = regexp.MustCompile(`-\d+$`)

// readCSV reads the tables of benchstat -format csv for a single input:
// a line ",<unit>,CI" starts a table, rows are "<name>,<median>,<ci>".
func readCSV(path string) (medians, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseCSV(f)
}

func parseCSV(r io.Reader) (medians, error) {
	m := medians{}
	unit := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		switch {
		case len(fields) < 2:
			unit = ""
		case fields[0] == "" && len(fields) == 3 && fields[2] == "CI":
			unit = fields[1]
		case unit != "" && fields[0] != "" && fields[0] != "geomean":
			v, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				continue
			}
			ci := math.Inf(1)
			if len(fields) > 2 {
				ci = parseCI(fields[2])
			}
			if m[unit] == nil {
				m[unit] = map[string]stat{}
			}
			m[unit][procs.ReplaceAllString(fields[0], "")] = stat{v, ci}
		}
	}
	return m, sc.Err()
}

// parseCI reads benchstat's CI column ("7%", "0%", "∞") as a fraction;
// anything else is +Inf (no interval).
func parseCI(s string) float64 {
	p, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return math.Inf(1)
	}
	v, err := strconv.ParseFloat(p, 64)
	if err != nil || v < 0 {
		return math.Inf(1)
	}
	return v / 100
}

// ratio returns m[unit][num] / m[unit][den], NaN if either is missing.
func (m medians) ratio(unit, num, den string) float64 {
	n, ok1 := m[unit][num]
	d, ok2 := m[unit][den]
	if !ok1 || !ok2 || d.med == 0 {
		return math.NaN()
	}
	return n.med / d.med
}

// ratioCI is the relative half-width of the confidence interval of
// ratio(unit, num, den): the two medians' intervals combined as
// independent errors (root sum of squares); +Inf if either is unknown.
func (m medians) ratioCI(unit, num, den string) float64 {
	n, ok1 := m[unit][num]
	d, ok2 := m[unit][den]
	if !ok1 || !ok2 {
		return math.Inf(1)
	}
	return math.Hypot(n.ci, d.ci)
}

// speed is how many times faster ours is than base, in wall time.
func (m medians) speed(base, ours string) float64 { return m.ratio("sec/op", base, ours) }

// cpu is how many times less CPU time ours takes than base.
func (m medians) cpu(base, ours string) float64 { return m.ratio("cpu-sec/op", base, ours) }

// alloc is our bytes allocated per operation over base's.
func (m medians) alloc(base, ours string) float64 { return m.ratio("B/op", ours, base) }

// metric is the median of a benchmark's custom metric, NaN if missing.
func (m medians) metric(unit, name string) float64 {
	s, ok := m[unit][name]
	if !ok {
		return math.NaN()
	}
	return s.med
}
