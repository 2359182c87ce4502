package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestOutcomesCounted: one request of each outcome shows up in the scrape
// under its outcome, stage and route label, and the accepted body in the
// histogram. Sabotage: without the Observe line in server, every count is
// missing.
func TestOutcomesCounted(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log(got)
	for _, want := range []string{
		`boundhttp_outcomes_total{outcome="accepted",route="POST /tools",stage=""} 2`,
		`boundhttp_outcomes_total{outcome="rejected",route="POST /tools",stage="wire"} 1`,
		`boundhttp_outcomes_total{outcome="rejected",route="POST /tools",stage="decoded"} 1`,
		`boundhttp_outcomes_total{outcome="rejected",route="POST /tools",stage="integrity"} 1`,
		`boundhttp_outcomes_total{outcome="response_breach",route="POST /tools",stage="response"} 1`,
		`boundhttp_accepted_decoded_bytes_count 2`,
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("scrape lacks %s", want)
		}
	}
}
