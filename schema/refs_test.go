package schema

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// doubledDefs returns a schema of depth definitions, each an object whose
// two members refer to the next: a naive walk visits the last one 2^depth
// times.
func doubledDefs(depth int, last string) []byte {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range depth {
		fmt.Fprintf(&b, `"d%d":{"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%d"}}},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":%s}}`, depth, last)
	return []byte(b.String())
}

// TestAuditDoubledDefsIsLinear pins the trap of walking a definition once
// per path to it: 22 definitions, each referring to the next twice (2.7 KB),
// took 15 s to audit, and NewMiddleware audits tool schemas at start-up.
// Each definition is walked once, so the whole audit takes about a
// millisecond; the guard is 100 ms for the best of three runs, 1 s under
// -race (measured: 2-4 ms, and 4-70 ms under -race on 2 shared cores).
func TestAuditDoubledDefsIsLinear(t *testing.T) {
	t.Parallel()
	for _, last := range []string{`{"type":"string","maxLength":1}`, `{"type":"string"}`} {
		doc := doubledDefs(22, last)
		var (
			findings        []Finding
			worst           int64
			report          ToolReport
			err, werr, rerr error
		)
		elapsed := time.Hour
		for range 3 { // the best of three: the machine is shared
			start := time.Now()
			findings, err = Audit(doc)
			worst, werr = WorstCase(doc, Options{})
			report, rerr = AuditTool("t", doc, Options{})
			elapsed = min(elapsed, time.Since(start))
		}
		if err != nil || rerr != nil {
			t.Fatal(err, rerr)
		}
		t.Logf("depth 22, %d bytes, last %s: Audit, WorstCase and AuditTool in %v", len(doc), last, elapsed)
		limit := 100 * time.Millisecond
		if raceEnabled {
			limit = time.Second
		}
		if elapsed > limit {
			t.Errorf("auditing %d bytes of doubled $defs took %v, want under %v", len(doc), elapsed, limit)
		}
		if strings.Contains(last, "maxLength") {
			// 2^22 strings of at most 1 character: the bound counts every path.
			leaves := int64(1) << 22
			if werr != nil || worst < leaves*8 {
				t.Errorf("WorstCase = %d, %v; want at least %d", worst, werr, leaves*8)
			}
			continue
		}
		// One finding, at the definition, not one per path to it.
		want := []string{"string-without-maxLength /$defs/d22"}
		if diff := cmp.Diff(want, paths(findings)); diff != "" {
			t.Errorf("Audit findings (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, paths(report.Findings)); diff != "" {
			t.Errorf("AuditTool findings (-want +got):\n%s", diff)
		}
	}
}

// TestAuditSelfRefIsRecursive: a definition that refers to itself, or to
// the root, is reported as recursion (unbounded), and the walk ends.
func TestAuditSelfRefIsRecursive(t *testing.T) {
	t.Parallel()
	tests := []struct {
		schema string
		want   []string
	}{
		{`{"$ref":"#/$defs/n","$defs":{"n":{"$ref":"#/$defs/n"}}}`, []string{"recursive-ref /$defs/n"}},
		{`{"$ref":"#/$defs/n","$defs":{"n":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/n"}]}}}`, []string{"recursive-ref /$defs/n/anyOf/1"}},
		{`{"type":"array","maxItems":2,"items":{"$ref":"#"}}`, []string{"recursive-ref /items"}},
		{`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"type":"array","maxItems":1,"items":{"$ref":"#/$defs/a"}}}}`,
			[]string{"recursive-ref /$defs/b/items"}},
	}
	for _, tt := range tests {
		findings, err := Audit([]byte(tt.schema))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, paths(findings)); diff != "" {
			t.Errorf("Audit(%s) (-want +got):\n%s", tt.schema, diff)
		}
		if _, err := WorstCase([]byte(tt.schema), Options{}); err == nil {
			t.Errorf("WorstCase(%s) = nil error, want ErrUnbounded", tt.schema)
		}
	}
}

// TestAuditDeepNestingIsLinear pins the trap of a path string per schema:
// 9,990 nested arrays (380 KB, just under encoding/json's depth limit)
// built a pointer of up to 60 KB at every level and hashed it for the
// memo, 500 MB of allocation in all. The walk allocates in proportion to
// the document; nested open objects, a finding at every level, write out
// at most 100 findings and one that counts the rest.
func TestAuditDeepNestingIsLinear(t *testing.T) {
	// Not parallel: the allocation count is the process's.
	for _, tt := range []struct {
		name, open, close string
		findings          int
	}{
		{"bounded arrays", `{"type":"array","maxItems":1,"items":`, `}`, 0},
		{"open objects", `{"type":"object","properties":{"a":`, `}}`, 100 + 1},
	} {
		depth := 9990
		if tt.findings > 0 {
			depth = 4990 // two levels of JSON each
		}
		doc := []byte(strings.Repeat(tt.open, depth) + `{"type":"null"}` + strings.Repeat(tt.close, depth))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		findings, err := Audit(doc)
		elapsed := time.Since(start)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes, depth %d: %v, %d MB allocated", tt.name, len(doc), depth, elapsed, alloc>>20)
		if limit := uint64(100 * len(doc)); alloc > limit {
			t.Errorf("%s: auditing %d bytes allocated %d bytes, want at most %d", tt.name, len(doc), alloc, limit)
		}
		if len(findings) != tt.findings {
			t.Errorf("%s: %d findings, want %d", tt.name, len(findings), tt.findings)
		}
	}
}
