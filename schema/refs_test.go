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

// TestAuditRepeatedTypeIsLinear pins the trap of bounding an object once
// per entry of its type list: "type":["object","object",...] repeated the
// walk of all its properties for each entry, time and memory the product
// of the two (20,000 of each, 400 KB, ran for more than 5 minutes; 3,000
// of each, 98 KB, allocated 1.7 GB). Each type is bounded once;
// allocation stays within 100 bytes per byte of the document.
func TestAuditRepeatedTypeIsLinear(t *testing.T) {
	// Not parallel: the allocation count is the process's.
	const n = 3000
	var b strings.Builder
	b.WriteString(`{"additionalProperties":false,"type":["object"`)
	b.WriteString(strings.Repeat(`,"object"`, n-1))
	b.WriteString(`],"properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":{"type":"null"}`, i)
	}
	b.WriteString(`}}`)
	doc := []byte(b.String())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Audit(doc); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes: %d MB allocated", len(doc), alloc>>20)
	if limit := uint64(100 * len(doc)); alloc > limit {
		t.Errorf("auditing %d bytes allocated %d bytes, want at most %d", len(doc), alloc, limit)
	}
}

// TestWorstCaseRefIsPercentDecoded pins the trap of reading a $ref's
// fragment as a JSON Pointer without decoding it first: the fragment is
// part of a URI (RFC 6901, section 6), and validators (Ajv, Python's
// jsonschema) percent-decode it, so "#/$defs/a%25" is the definition "a%",
// not "a%25". The bound was that of the wrong definition.
func TestWorstCaseRefIsPercentDecoded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<", 100)
	checkNotBelow(t, `{"$ref":"#/$defs/a%25","$defs":{"a%25":{"type":"string","maxLength":1},"a%":{"type":"string","maxLength":100}}}`, Options{}, long)
	checkNotBelow(t, `{"$ref":"#/$defs/a%2Fb","$defs":{"a%2Fb":{"type":"null"},"a":{"b":{"type":"string","maxLength":100}}}}`, Options{}, long)
	// A space, written %20 as a URI needs, is found.
	if n, err := WorstCase([]byte(`{"$ref":"#/$defs/a%20b","$defs":{"a b":{"type":"null"}}}`), Options{}); err != nil || n != 4 {
		t.Errorf("WorstCase($ref #/$defs/a%%20b) = %d, %v; want 4", n, err)
	}
	// A fragment that does not decode is not resolved.
	if _, err := WorstCase([]byte(`{"$ref":"#/$defs/a%zz","$defs":{"a%zz":{"type":"null"}}}`), Options{}); err == nil {
		t.Errorf("WorstCase($ref #/$defs/a%%zz) = nil error, want ErrUnbounded (unresolved)")
	}
}

// TestWorstCaseRefResolvesInItsResource pins the trap of resolving every
// "#..." $ref against the document's root: a subschema with its own $id
// is a schema resource of its own, and a fragment $ref within it refers to
// that resource (JSON Schema 2020-12, section 8.2.1), so the definitions
// below that a validator uses are the inner ones, of 100 characters, while
// the bound was that of the root's, of 1.
func TestWorstCaseRefResolvesInItsResource(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<", 100)
	inner := `{"$id":"https://example.com/inner","$defs":{"s":{"type":"string","maxLength":100}},"type":"object","additionalProperties":false,"properties":{"a":{"$ref":"#/$defs/s"}}}`
	root := `"$defs":{"s":{"type":"string","maxLength":1},"inner":` + inner + `}`
	for _, tt := range []struct {
		schema string
		v      any
	}{
		// Reached by walking into it.
		{`{"type":"object","additionalProperties":false,"properties":{"p":` + inner + `},` + root + `}`, map[string]any{"p": map[string]any{"a": long}}},
		// Reached by a $ref from the root, into it and below it.
		{`{"$ref":"#/$defs/inner",` + root + `}`, map[string]any{"a": long}},
		{`{"$ref":"#/$defs/inner/properties/a",` + root + `}`, long},
		// $ref beside $id: in 2020-12 the $ref is resolved against the $id.
		{`{"type":"array","maxItems":1,"items":{"$id":"https://example.com/i","$ref":"#/$defs/s","$defs":{"s":{"type":"string","maxLength":100}}},"$defs":{"s":{"type":"string","maxLength":1}}}`, []any{long}},
	} {
		checkNotBelow(t, tt.schema, Options{}, tt.v)
	}
	// An $id that is only a fragment (an anchor in draft-07) starts no
	// resource.
	doc := `{"type":"array","maxItems":1,"items":{"$id":"#a","$ref":"#/$defs/s"},"$defs":{"s":{"type":"null"}}}`
	if n, err := WorstCase([]byte(doc), Options{}); err != nil || n != 6 {
		t.Errorf("WorstCase(%s) = %d, %v; want 6", doc, n, err)
	}
}

// TestAuditRefChainIsShallow pins the trap of following $ref on the call
// stack without a floor: JSON nesting stops at 10,000 levels in
// encoding/json, but a chain of definitions, each a $ref to the next, is
// as deep as it is long. 100,000 of them (3.3 MB) took 6 s and 128 MB of
// stack (the garbage collector scans the whole stack at every cycle), and
// a chain of a million would pass Go's 1 GB stack limit, a fatal error no
// recover catches. The walk stops 10,000 schemas deep with a finding: an
// over-approximation, safe, and linear (the time is logged, not asserted:
// the finding says that the walk stopped).
func TestAuditRefChainIsShallow(t *testing.T) {
	t.Parallel()
	const n = 100000
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/0","$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"%d":{"$ref":"#/$defs/%d"},`, i, i+1)
	}
	fmt.Fprintf(&b, `"%d":{"type":"null"}}}`, n)
	doc := []byte(b.String())
	start := time.Now()
	findings, err := Audit(doc)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes, a chain of %d $refs: %v", len(doc), n, elapsed)
	if len(findings) != 1 || findings[0].Kind != KindInvalid || !strings.Contains(findings[0].Message, "10000") {
		t.Errorf("Audit(a chain of %d $refs) = %v, want one finding that the nesting passes 10000", n, findings)
	}
	// A chain within the floor is followed to its end.
	short := strings.Replace(string(doc), `"9000":{"$ref":"#/$defs/9001"}`, `"9000":{"type":"string","maxLength":1}`, 1)
	if w, err := WorstCase([]byte(short), Options{}); err != nil || w != 2+12 {
		t.Errorf("WorstCase(a chain of 9000 $refs to a string of 1) = %d, %v; want 14", w, err)
	}
}
