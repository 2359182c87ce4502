package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// minTolerance is the smallest drop of a time figure that counts as a
// regression, however narrow the confidence intervals: a few percent are
// below what a shared 2-core machine can tell apart.
const minTolerance = 0.03

// fig is one figure of a table row, as it is compared between the binary
// built from the before revision and the current one.
type fig struct {
	label string
	v     float64 // NaN when a benchmark is missing from the binary
	// ci is the relative half-width of v's 95% confidence interval,
	// +Inf when unknown (fewer than 6 rounds).
	ci          float64
	lowerBetter bool // allocation and cost ratios; speed ratios are higher-better
	// exact marks an allocation figure: it is compared at the printed
	// precision, without a noise tolerance (ci is then only reported).
	exact bool
}

// speedFig is base's wall time over ours (higher is better).
func (m medians) speedFig(label, base, ours string) fig {
	return fig{label: label, v: m.speed(base, ours), ci: m.ratioCI("sec/op", base, ours)}
}

// allocFig is our bytes per operation over base's (lower is better).
func (m medians) allocFig(label, base, ours string) fig {
	return fig{label: label, v: m.alloc(base, ours), ci: m.ratioCI("B/op", base, ours), lowerBetter: true, exact: true}
}

// costFig is num's wall time over den's (lower is better).
func (m medians) costFig(label, num, den string) fig {
	return fig{label: label, v: m.ratio("sec/op", num, den), ci: m.ratioCI("sec/op", num, den), lowerBetter: true}
}

// metricFig is the median of a higher-is-better custom metric.
func (m medians) metricFig(label, unit, name string) fig {
	f := fig{label: label, v: math.NaN(), ci: math.Inf(1)}
	if s, ok := m[unit][name]; ok {
		f.v, f.ci = s.med, s.ci
	}
	return f
}

// regression compares the figures of one row, before and after (the same
// figures in the same order, from the two binaries' medians), and returns
// the row's "no regression" verdict. An allocation figure regresses when
// its printed value is worse at all, or, when its bytes varied between
// rounds, worse by more than that variation (the intervals of the four
// medians combined, as for time, with no floor). A time figure regresses when it is
// worse by more than the tolerance: the confidence intervals of the four
// medians behind the two ratios combined (root sum of squares), and at
// least minTolerance. Without intervals (fewer than 6 rounds) time figures
// are shown but not judged. A figure missing from either binary is n/a.
func regression(before, after []fig) string {
	var fails, na, notes []string
	compared, allocs, unjudged := 0, 0, 0
	worst, worstTol, worstLabel := math.Inf(1), 0.0, ""
	for i, a := range after {
		b := before[i]
		if math.IsNaN(a.v) || math.IsNaN(b.v) {
			na = append(na, a.label)
			continue
		}
		compared++
		if a.exact {
			allocs++
			pa, pb := round2(a.v), round2(b.v)
			if (a.lowerBetter && pa > pb) || (!a.lowerBetter && pa < pb) {
				f := fmt.Sprintf("%s %s -> %s", a.label, f2(b.v), f2(a.v))
				// Bytes that moved between rounds (pools a collection
				// emptied) are not exact: the change counts only beyond
				// that variation, as a time figure's does beyond its
				// intervals, with no floor.
				if ci := math.Hypot(a.ci, b.ci); ci > 0 && !math.IsInf(ci, 1) {
					change := b.v/a.v - 1
					if !a.lowerBetter {
						change = a.v/b.v - 1
					}
					if change >= -ci {
						notes = append(notes, fmt.Sprintf("%s within the rounds' variation of B/op, %s", f, tolStr(ci)))
						continue
					}
					f += fmt.Sprintf(" (B/op vary %s between rounds)", tolStr(ci))
				}
				fails = append(fails, f)
			}
			continue
		}
		// change > 0 is an improvement, < 0 a regression.
		change := a.v/b.v - 1
		if a.lowerBetter {
			change = b.v/a.v - 1
		}
		tol := math.Max(minTolerance, math.Hypot(a.ci, b.ci))
		if math.IsInf(tol, 1) {
			unjudged++
		} else if change < -tol {
			fails = append(fails, fmt.Sprintf("%s %s (tolerance %s)", a.label, pct(change), tolStr(tol)))
			continue
		}
		if change < worst {
			worst, worstTol, worstLabel = change, tol, a.label
		}
	}
	if compared == 0 {
		return "n/a"
	}
	if !math.IsInf(worst, 1) {
		if math.IsInf(worstTol, 1) {
			notes = append(notes, fmt.Sprintf("worst time change %s %s; fewer than 6 rounds give no confidence interval", worstLabel, pct(worst)))
		} else {
			notes = append(notes, fmt.Sprintf("worst time change %s %s, tolerance %s", worstLabel, pct(worst), tolStr(worstTol)))
		}
	}
	if len(na) > 0 {
		notes = append(notes, "n/a: "+strings.Join(na, ", "))
	}
	v := "no regression"
	switch {
	case len(fails) > 0:
		v = "**regression**: " + strings.Join(fails, "; ")
	case unjudged > 0 && allocs > 0:
		v = "no allocation regression; time not judged"
	case unjudged > 0:
		v = "time not judged"
	}
	if len(notes) > 0 {
		v += " (" + strings.Join(notes, "; ") + ")"
	}
	return v
}

// round2 rounds v as f2 prints it.
func round2(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return r
}

// pct formats a change as a signed percentage.
func pct(v float64) string { return fmt.Sprintf("%+.0f%%", v*100) }

// tolStr formats a tolerance as "±n%".
func tolStr(v float64) string { return fmt.Sprintf("±%.0f%%", v*100) }
