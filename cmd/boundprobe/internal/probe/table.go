package probe

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeTable prints rep for a person: one line per search, then one per
// tool.
func writeTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "%s %s (%s)\n\n", rep.Method, rep.URL, rep.ContentType)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "body\tceiling (wire)\tdecoded\texact\trequests\trefused at (wire/decoded)\trefused by")
	for _, row := range []struct {
		name string
		c    *Ceiling
	}{{"identity", rep.Identity}, {"gzip", rep.Gzip}} {
		c := row.c
		at, by := "-", "nothing refused up to -max-size"
		if c.RefusedAt == nil && strings.HasPrefix(c.Note, "-max-requests") {
			by = "nothing refused before -max-requests ran out"
		}
		if c.RefusedAt != nil {
			at = fmt.Sprintf("%d/%d", c.RefusedAt.Wire, c.RefusedAt.Decoded)
			by = describe(c.Refusal)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t%s\n", row.name, c.Ceiling, c.DecodedCeiling, yesNo(c.Exact), c.Requests, at, by)
	}
	tw.Flush()
	for _, row := range []struct {
		name string
		c    *Ceiling
	}{{"identity", rep.Identity}, {"gzip", rep.Gzip}} {
		if row.c.Note != "" {
			fmt.Fprintf(w, "%s: %s\n", row.name, row.c.Note)
		}
		if a := row.c.Accepted; a != nil && a.Status/100 != 2 {
			fmt.Fprintf(w, "%s: the accepted bodies were answered %d, not 2xx: the size limits passed them, something else did not\n", row.name, a.Status)
		}
	}
	if rep.Tools == nil {
		return
	}
	fmt.Fprintf(w, "\ntools (largest tools/call request + %.0f%% headroom vs the identity ceiling)\n", rep.Headroom*100)
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "tool\tlargest request\tceiling\tfits")
	for _, f := range rep.Tools {
		worst := fmt.Sprint(f.WorstRequest)
		if len(f.Unbounded) > 0 {
			worst = "unbounded"
		}
		fits := "yes"
		if !f.Fits {
			fits = "NO: " + f.Problem
			if len(f.Unbounded) > 0 {
				fits += " (" + strings.Join(f.Unbounded, "; ") + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", f.Name, worst, f.Ceiling, fits)
	}
	tw.Flush()
}

// describe says in one line who answered a.
func describe(a *Answer) string {
	if a.Outcome != OutcomeAnswered {
		return fmt.Sprintf("no answer: connection %s after %d bytes sent (%s)", a.Outcome, a.Sent, a.Error)
	}
	switch a.By {
	case ByBoundhttp:
		s := fmt.Sprintf("boundhttp problem: %d, stage %s", a.Status, a.Stage)
		if a.Limit != nil {
			s += fmt.Sprintf(", limit %d", *a.Limit)
		}
		if a.Observed != nil {
			s += fmt.Sprintf(", observed %d", *a.Observed)
		}
		return s
	case ByProblemJSON:
		return fmt.Sprintf("problem+json: %d %s %q", a.Status, a.Type, a.Title)
	}
	s := fmt.Sprintf("%d", a.Status)
	if a.ContentType != "" {
		s += " " + a.ContentType
	}
	if a.Server != "" {
		s += ", Server: " + a.Server
	}
	if a.Title != "" {
		s += fmt.Sprintf(", title %q", a.Title)
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
