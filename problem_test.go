package boundhttp_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestProblemIsRejectionWithHTTPMembers pins the trap of two JSON forms of
// one limits.Error that drift apart (Stage a string in one and a
// limits.Stage in the other, field and pointer in one only): a problem
// document is exactly the Rejection's members plus type, title and status,
// with the same values, and both keep their member names.
func TestProblemIsRejectionWithHTTPMembers(t *testing.T) {
	t.Parallel()
	e := &limits.Error{Stage: limits.StageJSON, Field: "MaxDepth", Limit: 2, Observed: 3,
		Pointer: "/" + strings.Repeat("k", 100) + "/0", Encoding: "gzip"}
	var problem, rejection map[string]any
	pj, _ := json.Marshal(boundhttp.ProblemOf(e))
	rj, _ := json.Marshal(boundhttp.RejectionOf(e))
	if err := json.Unmarshal(pj, &problem); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rj, &rejection); err != nil {
		t.Fatal(err)
	}
	want := []string{"detail", "encoding", "field", "limit", "observed", "pointer", "stage"}
	if got := slices.Sorted(maps.Keys(rejection)); !slices.Equal(got, want) {
		t.Errorf("Rejection members %v, want %v", got, want)
	}
	for k, v := range rejection {
		if problem[k] != v {
			t.Errorf("member %s: problem %v, rejection %v; want the same", k, problem[k], v)
		}
	}
	if problem["type"] != "urn:boundhttp:problem:json" || problem["title"] != "Request Entity Too Large" || problem["status"] != 413.0 || len(problem) != len(rejection)+3 {
		t.Errorf("problem %s: want the rejection's members plus type, title and status 413", pj)
	}
	if rejection["pointer"] != limits.EchoPointer(e.Pointer) || rejection["stage"] != "json" {
		t.Errorf("rejection %s: want the pointer as EchoPointer writes it, stage json", rj)
	}
}
