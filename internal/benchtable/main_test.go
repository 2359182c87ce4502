package main

import (
	"math"
	"strings"
	"testing"
)

// A benchstat -format csv output of one input: two units, a CI column
// with "∞" where there were too few rounds, a geomean line per table.
const sampleCSV = `goos: linux
goarch: amd64
pkg: github.com/boundhttp/boundhttp
cpu: AMD EPYC
,raw.txt,
,sec/op,CI
MiddlewareClients/size=4KiB/clients=1/handler=MaxBytesHandler-2,6.0e-05,4%
MiddlewareClients/size=4KiB/clients=1/handler=Middleware-2,6.5e-05,3%
Decode/coding=gzip/decoder=raw-2,0.005,∞
geomean,6.2e-05,

,raw.txt,
,B/op,CI
MiddlewareClients/size=4KiB/clients=1/handler=MaxBytesHandler-2,6218,0%
MiddlewareClients/size=4KiB/clients=1/handler=Middleware-2,6926,0%
geomean,6500,

,raw.txt,
,speed,CI
MiddlewareVsMaxBytesHandler/size=4KiB-2,0.95,1%
geomean,0.95,
`

func TestParseCSVKeepsMedianAndIntervalPerUnitWithoutProcsSuffix(t *testing.T) {
	m, err := parseCSV(strings.NewReader(sampleCSV))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		unit, name string
		want       stat
	}{
		{"sec/op", mc(1, "MaxBytesHandler"), stat{6.0e-05, 0.04}},
		{"sec/op", mc(1, "Middleware"), stat{6.5e-05, 0.03}},
		{"sec/op", "Decode/coding=gzip/decoder=raw", stat{0.005, math.Inf(1)}},
		{"B/op", mc(1, "Middleware"), stat{6926, 0}},
		{"speed", paired, stat{0.95, 0.01}},
	} {
		got, ok := m[tt.unit][tt.name]
		if !ok || got != tt.want {
			t.Errorf("m[%q][%q] = %v, %v; want %v", tt.unit, tt.name, got, ok, tt.want)
		}
	}
	if _, ok := m["sec/op"]["geomean"]; ok {
		t.Error("geomean parsed as a benchmark")
	}
	if len(m["B/op"]) != 2 {
		t.Errorf("B/op has %d benchmarks, want 2: %v", len(m["B/op"]), m["B/op"])
	}
}

func TestRatiosComeFromOneBinarysMedians(t *testing.T) {
	m, err := parseCSV(strings.NewReader(sampleCSV))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.speed(mc(1, "MaxBytesHandler"), mc(1, "Middleware")), 6.0/6.5; math.Abs(got-want) > 1e-12 {
		t.Errorf("speed = %v, want %v (base time over ours)", got, want)
	}
	if got, want := m.alloc(mc(1, "MaxBytesHandler"), mc(1, "Middleware")), 6926.0/6218; math.Abs(got-want) > 1e-12 {
		t.Errorf("alloc = %v, want %v (our bytes over base's)", got, want)
	}
	if got, want := m.ratioCI("sec/op", mc(1, "MaxBytesHandler"), mc(1, "Middleware")), 0.05; math.Abs(got-want) > 1e-12 {
		t.Errorf("ratioCI = %v, want %v (4%% and 3%% as root sum of squares)", got, want)
	}
	if got := m.speed(mc(1, "MaxBytesHandler"), "missing"); !math.IsNaN(got) {
		t.Errorf("speed against a missing benchmark = %v, want NaN", got)
	}
}

func TestRegressionVerdict(t *testing.T) {
	inf := math.Inf(1)
	speed := func(v, ci float64) fig { return fig{label: "s", v: v, ci: ci} }
	alloc := func(v float64) fig { return fig{label: "a", v: v, lowerBetter: true, exact: true} }
	allocCI := func(v, ci float64) fig { return fig{label: "a", v: v, ci: ci, lowerBetter: true, exact: true} }
	cost := func(v, ci float64) fig { return fig{label: "c", v: v, ci: ci, lowerBetter: true} }
	for _, tt := range []struct {
		name          string
		before, after fig
		want          string // prefix of the verdict
	}{
		{"speed better", speed(1.0, 0.02), speed(1.1, 0.02), "no regression"},
		{"speed drop inside the intervals", speed(1.0, 0.06), speed(0.93, 0.06), "no regression"},
		{"speed drop beyond the intervals", speed(1.0, 0.03), speed(0.93, 0.03), "**regression**: s -7%"},
		{"drop under the 3% floor with exact medians", speed(1.0, 0), speed(0.98, 0), "no regression"},
		{"drop over the 3% floor with exact medians", speed(1.0, 0), speed(0.96, 0), "**regression**"},
		{"no interval: shown, not judged", speed(1.0, inf), speed(0.5, inf), "time not judged (worst time change s -50%"},
		{"allocation worse at the printed precision", alloc(0.80), alloc(0.81), "**regression**: a 0.80 -> 0.81"},
		{"allocation worse below the printed precision", alloc(0.801), alloc(0.804), "no regression"},
		{"allocation better", alloc(0.81), alloc(0.80), "no regression"},
		{"varying allocation worse within its rounds' variation", allocCI(0.8147, 0.005), allocCI(0.8162, 0.005), "no regression (a 0.81 -> 0.82 within the rounds' variation"},
		{"varying allocation worse beyond its rounds' variation", allocCI(0.80, 0.002), allocCI(0.82, 0.002), "**regression**: a 0.80 -> 0.82 (B/op vary"},
		{"cost up beyond the intervals", cost(1.0, 0.01), cost(1.2, 0.01), "**regression**: c -17%"},
		{"cost down", cost(1.2, 0.01), cost(1.0, 0.01), "no regression"},
		{"only in the after binary", fig{label: "p", v: math.NaN()}, speed(0.9, 0.01), "n/a"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := regression([]fig{tt.before}, []fig{tt.after})
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("regression(%+v, %+v) = %q, want prefix %q", tt.before, tt.after, got, tt.want)
			}
		})
	}
}

func TestRegressionOfRowWithMissingAndUnjudgedFigures(t *testing.T) {
	before := []fig{{label: "separate", v: 0.93, ci: math.Inf(1)}, {label: "paired", v: math.NaN(), ci: math.Inf(1)}, {label: "bytes", v: 1.1, lowerBetter: true, exact: true}}
	after := []fig{{label: "separate", v: 0.95, ci: math.Inf(1)}, {label: "paired", v: 0.96, ci: 0.01}, {label: "bytes", v: 1.1, lowerBetter: true, exact: true}}
	got := regression(before, after)
	for _, want := range []string{"no allocation regression; time not judged", "n/a: paired"} {
		if !strings.Contains(got, want) {
			t.Errorf("regression = %q, want it to contain %q", got, want)
		}
	}
}

// tableOf evaluates the table on after and before (nil: no before).
func tableOf(t *testing.T, after, before string) string {
	t.Helper()
	ma, err := parseCSV(strings.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	var mb medians
	if before != "" {
		if mb, err = parseCSV(strings.NewReader(before)); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	writeTable(&b, ma, mb, "old", "new")
	return b.String()
}

func TestMiddlewareRowVerdictUsesPairedFigure(t *testing.T) {
	// Separate runs 0.92 (not met), paired 0.95 (not met) vs 0.98 (met).
	for _, tt := range []struct {
		paired, want string
	}{
		{"0.95", "| >= 0.97 | **not met** (paired) |"},
		{"0.98", "| >= 0.97 | met (paired) |"},
	} {
		csv := strings.Replace(sampleCSV, "4KiB-2,0.95,1%", "4KiB-2,"+tt.paired+",1%", 1)
		row := rowOf(t, "| Middleware vs `http.MaxBytesHandler`", tableOf(t, csv, ""))
		if !strings.Contains(row, "0.92 (CPU n/a; paired "+tt.paired+")") || !strings.Contains(row, tt.want) {
			t.Errorf("paired %s: row %q, want the figures and %q", tt.paired, row, tt.want)
		}
	}
	noPaired := strings.Replace(sampleCSV, "MiddlewareVsMaxBytesHandler", "Other", 1)
	if row := rowOf(t, "| Middleware vs `http.MaxBytesHandler`", tableOf(t, noPaired, "")); !strings.Contains(row, "**not met** (separate runs; paired not measured)") {
		t.Errorf("without the paired benchmark: row %q, want the separate-run verdict", row)
	}
}

func TestBeforeTableShowsNAForBenchmarksOnlyOneBinaryHas(t *testing.T) {
	// The before binary has no paired benchmark and no decoder benchmarks.
	before := strings.Replace(sampleCSV, "MiddlewareVsMaxBytesHandler", "Other", 1)
	before = strings.Replace(before, "Decode/coding=gzip", "Gone", 1)
	table := tableOf(t, sampleCSV, before)
	if !strings.Contains(table, "| measure | before (old) | after (new) | target | verdict (after) | before -> after |") {
		t.Errorf("no before/after header in\n%s", table)
	}
	row := rowOf(t, "| Middleware vs `http.MaxBytesHandler`", table)
	for _, want := range []string{"0.92 (CPU n/a; paired n/a) | 0.92 (CPU n/a; paired 0.95)", "n/a: paired", "no regression"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q, want it to contain %q", row, want)
		}
	}
	if got, want := strings.Count(table, "\n"), 2+len(rows); got != want {
		t.Errorf("table has %d lines, want %d:\n%s", got, want, table)
	}
	for _, l := range strings.Split(strings.TrimSpace(table), "\n")[2:] {
		if !strings.HasSuffix(l, "| n/a |") && !strings.Contains(l, "regression") {
			t.Errorf("row without a comparison verdict: %q", l)
		}
	}
}

// decodeCSV has the separate runs of the three codings at 0.92 and the
// paired figures of gzip and zstd; br's paired figure is given by the test.
const decodeCSV = `,raw.txt,
,sec/op,CI
Decode/coding=gzip/decoder=raw-2,0.0046,∞
Decode/coding=gzip/decoder=bounded-2,0.005,∞
Decode/coding=zstd/decoder=raw-2,0.0046,∞
Decode/coding=zstd/decoder=bounded-2,0.005,∞
Decode/coding=br/decoder=raw-2,0.0046,∞
Decode/coding=br/decoder=bounded-2,0.005,∞
geomean,0.0048,

,raw.txt,
,speed,CI
DecodePaired/coding=gzip-2,0.99,1%
DecodePaired/coding=zstd-2,1.01,1%
BR
geomean,1,
`

func TestDecodeRowVerdictUsesPairedFigures(t *testing.T) {
	for _, tt := range []struct {
		br, want string
	}{
		{"DecodePaired/coding=br-2,0.96,1%", "| >= 0.97 each | **not met** (paired) |"},
		{"DecodePaired/coding=br-2,0.97,1%", "| >= 0.97 each | met (paired) |"},
		// Without br's paired figure its separate runs (0.92) decide.
		{"", "| >= 0.97 each | **not met** (separate runs where paired is not measured) |"},
	} {
		row := rowOf(t, "| bounded decode vs the raw decoder", tableOf(t, strings.Replace(decodeCSV, "BR", tt.br, 1), ""))
		if !strings.Contains(row, "| 0.92 (CPU n/a; paired 0.99) / 0.92 (CPU n/a; paired 1.01) / 0.92 (CPU n/a; paired ") || !strings.Contains(row, tt.want) {
			t.Errorf("br %q: row %q, want the figures and %q", tt.br, row, tt.want)
		}
	}
}

// A benchstat output with the 4 KiB fetch measured separately (speed 0.90)
// and paired (PAIRED).
const fetchCSV = `,raw.txt,
,sec/op,CI
Fetch/size=4KiB/client=stock-2,4.5e-05,3%
Fetch/size=4KiB/client=bounded-2,5.0e-05,3%
geomean,4.7e-05,

,raw.txt,
,speed,CI
PAIRED
geomean,1,
`

func TestFetchRowSpeedVerdictUsesPairedFigure(t *testing.T) {
	for _, tt := range []struct {
		paired, want string
	}{
		{"FetchPaired/size=4KiB/client=bounded-2,0.99,1%", "speed **not met** (paired)"},
		{"FetchPaired/size=4KiB/client=bounded-2,1.01,1%", "speed met (paired)"},
		// Without the paired benchmark the separate runs (0.90) decide.
		{"", "speed **not met** (separate runs; paired not measured)"},
	} {
		row := rowOf(t, "| whole-body fetch of a 4 KiB", tableOf(t, strings.Replace(fetchCSV, "PAIRED", tt.paired, 1), ""))
		if !strings.Contains(row, "io.ReadAll 0.90 (CPU n/a; paired ") || !strings.Contains(row, tt.want) {
			t.Errorf("paired %q: row %q, want the figures and %q", tt.paired, row, tt.want)
		}
	}
}

// rowOf returns the line of table that starts with prefix.
func rowOf(t *testing.T, prefix, table string) string {
	t.Helper()
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no row %q in\n%s", prefix, table)
	return ""
}

// bombCSV has the four bomb rejections; the B/op of the zstd ones and their
// intervals are given by the test.
const bombCSV = `,raw.txt,
,sec/op,CI
BombRejection/coding=gzip/size=16MiB-2,0.0003,2%
BombRejection/coding=gzip/size=1024MiB-2,0.0003,2%
BombRejection/coding=zstd/size=16MiB-2,0.0002,2%
BombRejection/coding=zstd/size=1024MiB-2,0.0002,2%
geomean,0.00025,

,raw.txt,
,B/op,CI
BombRejection/coding=gzip/size=16MiB-2,1800,0%
BombRejection/coding=gzip/size=1024MiB-2,1800,0%
ZSTD
geomean,2000,
`

// TestBombRowBytesJudgedAgainstTheirVariation (trap: a row that builds its
// allocation figure by hand and drops the rounds' variation): the bomb
// rejection's bytes move by a third between rounds (pools a collection
// emptied), so a ratio of 0.91 before and 1.11 after is within that
// variation; the same change between bytes that did not vary regresses.
func TestBombRowBytesJudgedAgainstTheirVariation(t *testing.T) {
	zstd := func(small, big, ci string) string {
		return strings.Replace(bombCSV, "ZSTD", "BombRejection/coding=zstd/size=16MiB-2,"+small+","+ci+
			"\nBombRejection/coding=zstd/size=1024MiB-2,"+big+","+ci, 1)
	}
	for _, tt := range []struct {
		ci, want string
	}{
		{"31%", "no regression"},
		{"0%", "**regression**: zstd bytes 0.91 -> 1.11"},
	} {
		before, after := zstd("4000", "3640", tt.ci), zstd("3600", "3996", tt.ci)
		row := rowOf(t, "| no regression: cost of rejecting", tableOf(t, after, before))
		cells := strings.Split(row, "|")
		if verdict := strings.TrimSpace(cells[len(cells)-2]); !strings.HasPrefix(verdict, tt.want) {
			t.Errorf("B/op varying %s between rounds: before -> after %q, want %q", tt.ci, verdict, tt.want)
		}
	}
}
