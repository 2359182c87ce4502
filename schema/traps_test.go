package schema

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/boundhttp/boundhttp/limits"
)

// TestWorstCasePythonWholeFloatInExponentForm pins the trap of counting a
// whole number as its digits plus 3: Python writes a whole float from 1e16
// up in exponent form (repr), so -12345678901234568.0, valid for an integer
// with minimum -1e17 and for the const -12345678901234568, is sent as
// -1.2345678901234568e+16: 23 bytes, while the digits plus 3 are 21 and 20.
func TestWorstCasePythonWholeFloatInExponentForm(t *testing.T) {
	t.Parallel()
	neg := rawNumber("-1.2345678901234568e+16") // Python's repr of the float
	pos := rawNumber("1.2345678901234568e+16")
	for _, tt := range []struct {
		schema string
		v      any
	}{
		{`{"type":"integer","minimum":-1e17,"maximum":0}`, neg},
		{`{"type":"integer","minimum":-1e17,"maximum":1e17}`, neg},
		{`{"type":"integer","exclusiveMinimum":-1e17,"maximum":5}`, neg},
		{`{"type":"integer","minimum":0,"maximum":99999999999999999}`, pos},
		{`{"const":-12345678901234568}`, neg},
		{`{"enum":[1,12345678901234568]}`, pos},
		{`{"type":"array","maxItems":2,"items":{"type":"integer","minimum":-1e18,"maximum":0}}`, []any{neg, neg}},
	} {
		checkNotBelow(t, tt.schema, Options{}, tt.v)
	}
}

// TestWorstCasePrefixItemsBeforeDraft2020 pins the trap of reading
// prefixItems in every dialect: it is new in draft 2020-12, and a draft-07
// or 2019-09 validator ignores it, so items (or any value, without items)
// applies to the first items too. ["<<<<"] is valid against the schema
// below in draft-07 and was bounded as [false].
func TestWorstCasePrefixItemsBeforeDraft2020(t *testing.T) {
	t.Parallel()
	long := "<<<<<<<<<<"
	for _, d := range []string{"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft/2019-09/schema"} {
		for _, tail := range []string{`"items":{"type":"string","maxLength":10}`, `"items":{"type":"string","maxLength":10},"additionalItems":false`} {
			schema := `{"$schema":"` + d + `","type":"array","maxItems":1,"prefixItems":[{"type":"boolean"}],` + tail + `}`
			checkNotBelow(t, schema, Options{}, []any{long})
		}
		// Without items, any value may come first: no ceiling.
		schema := `{"$schema":"` + d + `","type":"array","maxItems":1,"prefixItems":[{"type":"boolean"}]}`
		if n, err := WorstCase([]byte(schema), Options{}); err == nil {
			t.Errorf("WorstCase(%s) = %d, want ErrUnbounded: prefixItems is not read before draft 2020-12", schema, n)
		}
		if f, _ := Audit([]byte(schema)); len(f) == 0 {
			t.Errorf("Audit(%s) found nothing", schema)
		}
	}
	// Draft 2020-12, or no $schema: prefixItems holds.
	for _, schema := range []string{
		`{"type":"array","maxItems":1,"prefixItems":[{"type":"boolean"}],"items":{"type":"string","maxLength":10}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","maxItems":1,"prefixItems":[{"type":"boolean"}]}`,
	} {
		if n, err := WorstCase([]byte(schema), Options{}); err != nil || n != 7 {
			t.Errorf("WorstCase(%s) = %d, %v; want 7 ([false])", schema, n, err)
		}
	}
}

// TestWorstCaseEscapesDEL pins the trap of taking "escape every
// non-ASCII character" for all that Python's json.dumps escapes: with
// ensure_ascii it writes every character outside space to tilde as \uXXXX,
// DEL (U+007F) included, so the const "\u007f\u007f" is sent as 14 bytes,
// not 4.
func TestWorstCaseEscapesDEL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ schema, python string }{
		{`{"const":"\u007f\u007f"}`, `"\u007f\u007f"`},
		{`{"enum":["a","\u007f"]}`, `"\u007f"`},
		{`{"type":"object","additionalProperties":false,"properties":{"\u007f":{"type":"null"}}}`, `{"\u007f": null}`},
	} {
		worst, err := WorstCase([]byte(tt.schema), Options{})
		if err != nil || worst < int64(len(tt.python)) {
			t.Errorf("WorstCase(%s) = %d, %v; below %s (%d bytes) as json.dumps writes it", tt.schema, worst, err, tt.python, len(tt.python))
		}
	}
}

// TestWorstCaseLoneSurrogateEscape pins the trap of measuring a string of
// the schema after Go's decoder has read it: a lone surrogate escape
// (\ud800) becomes U+FFFD, 3 bytes of UTF-8, while JavaScript and Python
// keep the lone surrogate and write it back as \ud800, 6 bytes. A string
// half of an emoji cut by String.prototype.slice is one.
func TestWorstCaseLoneSurrogateEscape(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ schema, js string }{
		{`{"const":"\ud800\ud800"}`, `"\ud800\ud800"`},
		{`{"enum":["\udc00x"]}`, `"\udc00x"`},
		{`{"const":{"a":"\ud83d"}}`, `{"a": "\ud83d"}`},
	} {
		worst, err := WorstCase([]byte(tt.schema), Options{})
		if err != nil || worst < int64(len(tt.js)) {
			t.Errorf("WorstCase(%s) = %d, %v; below %s (%d bytes) as JSON.stringify writes it", tt.schema, worst, err, tt.js, len(tt.js))
		}
	}
	// The tool's name is in the request too.
	reports, err := AuditTools([]byte(`{"tools":[{"name":"t\ud800","inputSchema":{"type":"null"}},{"name":"tx","inputSchema":{"type":"null"}}]}`), Options{})
	if err != nil || len(reports) != 2 || reports[0].WorstRequest < reports[1].WorstRequest+5 {
		t.Errorf("AuditTools(a name with a lone surrogate) = %+v, %v; want 5 bytes more than for the name tx", reports, err)
	}
}

// TestAuditLoneSurrogateKeysDoNotMerge pins the trap of keys that Go's
// decoder merges: "\ud800" and "\udc00" both become U+FFFD, so a closed
// object with the two properties was bounded as if it had one, while
// JavaScript and Python keep both and accept an instance with both. Such a
// document cannot be read faithfully by encoding/json: it is refused, as
// broken JSON is, by Audit, WorstCase, AuditTool and AuditTools alike.
func TestAuditLoneSurrogateKeysDoNotMerge(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ schema, js string }{
		{`{"type":"object","additionalProperties":false,"properties":{"\ud800":{"type":"string","maxLength":10},"\udc00":{"type":"string","maxLength":10}}}`,
			`{"\ud800": "\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001", "\udc00": "\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001\u0001"}`},
		{`{"const":{"a\udbff":1,"a\udfff":2}}`, `{"a\udbff": 1, "a\udfff": 2}`},
		{"{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{\"\xe2\x82\":{\"type\":\"null\"},\"\xef\xbf\xbd\xef\xbf\xbd\":{\"type\":\"null\"}}}",
			"{\"\ufffd\": null, \"\ufffd\ufffd\": null}"}, // WHATWG decodes E2 82 as one U+FFFD, Go as two
	} {
		worst, err := WorstCase([]byte(tt.schema), Options{})
		if err == nil && worst < int64(len(tt.js)) {
			t.Errorf("WorstCase(%q) = %d, below %s (%d bytes), valid in JavaScript", tt.schema, worst, tt.js, len(tt.js))
		}
		_, aerr := Audit([]byte(tt.schema))
		_, terr := AuditTool("t", []byte(tt.schema), Options{})
		_, lerr := AuditTools([]byte(`{"tools":[{"name":"t","inputSchema":`+tt.schema+`}]}`), Options{})
		if (err == nil) != (aerr == nil) || (err == nil) != (terr == nil) || (err == nil) != (lerr == nil) {
			t.Errorf("%q: WorstCase %v, Audit %v, AuditTool %v, AuditTools %v: want one answer", tt.schema, err, aerr, terr, lerr)
		}
	}
	// A lone surrogate in a string that is not a key, and a pair in a
	// key, are read.
	for _, doc := range []string{`{"const":"\ud800","description":"\udc00"}`, `{"type":"object","additionalProperties":false,"properties":{"\ud83d\ude00":{"type":"null"}}}`} {
		if _, err := WorstCase([]byte(doc), Options{}); err != nil {
			t.Errorf("WorstCase(%s) = %v", doc, err)
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

// TestToolReportCheckEchoesName pins the trap of quoting a peer's string
// whole: a tool whose bounded input does not fit the budget was named in
// the error with %q of its full name, a megabyte of text in a log record
// when a server chose such a name. The name is cut as limits.Echo cuts it,
// in both errors of Check.
func TestToolReportCheckEchoesName(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("n", 1<<20)
	for _, doc := range []string{`{"type":"string","maxLength":100000}`, `{"type":"string"}`} {
		r, err := AuditTool(name, []byte(doc), Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Check(limits.Budget{MaxWireBytes: 1024, MaxDecodedBytes: 1024}, DefaultHeadroom)
		if err == nil || len(err.Error()) > 2048 {
			t.Errorf("Check(%s) error is %d bytes, want an error of at most 2048", doc, len(fmt.Sprint(err)))
		}
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

// TestAuditAgreesUnderUTF8 pins the trap of a bound whose existence
// depends on the options: a string of at most 9e17 characters takes at
// most 5.4e18+2 bytes from a UTF-8 encoder, under 2^63, and 10.8e18+2 from
// one that escapes non-ASCII, over. Audit (which takes no options) and
// WorstCase and AuditTool under UTF8 must give one answer: whether there
// is a bound is decided for the widest encoder.
func TestAuditAgreesUnderUTF8(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`{"type":"string","maxLength":9e17}`,
		`{"type":"array","maxItems":9e17,"items":{"const":"éé"}}`,
		`{"type":"array","maxItems":2,"items":{"type":"string","maxLength":5e17}}`,
	} {
		findings, err := Audit([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Options{{}, {UTF8: true}} {
			n, werr := WorstCase([]byte(doc), o)
			r, _ := AuditTool("t", []byte(doc), o)
			if (len(findings) == 0) != (werr == nil) || len(findings) != len(r.Findings) {
				t.Errorf("%s, %+v: Audit %v, WorstCase %d %v, AuditTool %v: want one answer", doc, o, findings, n, werr, r.Findings)
			}
		}
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

// TestCheckBudgetRefusesNaNHeadroom pins the trap of "headroom < 0" as the
// only check: NaN passes it, and float64(worst)*NaN converted to int64 is
// whatever the platform makes of it (0 on arm64, so the headroom vanished
// and a request that fills the budget passed; math.MinInt64 on amd64, an
// error that claimed a need of 2^63-1 bytes). Infinite headroom likewise.
func TestCheckBudgetRefusesNaNHeadroom(t *testing.T) {
	t.Parallel()
	b := limits.Budget{MaxWireBytes: 1000, MaxDecodedBytes: 1000}
	for _, h := range []float64{math.NaN(), math.Inf(1)} {
		err := CheckBudget(1000, b, h)
		if err == nil || !strings.Contains(err.Error(), "invalid headroom") {
			t.Errorf("CheckBudget(1000, 1000, %v) = %v, want an invalid headroom error", h, err)
		}
	}
	// A headroom that takes the need past 2^63 is a need that fits nothing.
	if err := CheckBudget(1<<40, limits.Budget{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: math.MaxInt64}, 1e10); err == nil {
		t.Errorf("CheckBudget(2^40 with headroom 1e10, limits 2^63-1) = nil")
	}
}

// TestParseRefusesDataAfterABracket pins the trap of Decoder.More as the
// check for trailing data: it is false before a stray ] or }, so
// {"type":"null"}] was audited as if the ] were not there (and the key
// scan, which trusts a valid document, read past the end of ""]", a
// panic the fuzzer found).
func TestParseRefusesDataAfterABracket(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"type":"null"}]`, `{"type":"null"} }`, `""]"`, `{"type":"null"} x`} {
		if _, err := Audit([]byte(doc)); err == nil {
			t.Errorf("Audit(%s) = nil error, want data after the document", doc)
		}
	}
	if _, err := Audit([]byte(" {\"type\":\"null\"} \n\t")); err != nil {
		t.Errorf("Audit(with white space around) = %v", err)
	}
}

// TestAuditFindingPathsAreBounded pins the trap of writing out a long
// path once per finding: a property named with a megabyte of text, over
// 101 strings without maxLength, gave 100 findings whose paths each began
// with that megabyte: 100 MB of findings (and of ToolReport JSON) from a
// 1 MB schema. Paths stay exact, but once they add up to a megabyte the
// rest are counted, not written.
func TestAuditFindingPathsAreBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"type":"object","additionalProperties":false,"properties":{"` + strings.Repeat("k", 1<<20) + `":{"type":"object","additionalProperties":false,"properties":{`)
	for i := range 101 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"a%d":{"type":"string"}`, i)
	}
	b.WriteString(`}}}}`)
	findings, err := Audit([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range findings {
		total += len(f.Path) + len(f.Message)
	}
	if limit := 3 << 20; total > limit || len(findings) < 2 || !strings.Contains(findings[len(findings)-1].Message, "more places") {
		t.Errorf("Audit: %d findings of %d bytes, want at most %d bytes and a last one that counts the rest", len(findings), total, limit)
	}
}

// TestAuditReportsInsideAnUnboundedList pins the trap of stopping at the
// first missing ceiling: an array without maxItems was reported, its items
// were not walked, so a string without maxLength inside it (here in a
// definition reached through $ref) surfaced only after the user had added
// maxItems and run the audit again. Every list and string without a
// ceiling is reported in one pass: fixing every finding leaves none.
func TestAuditReportsInsideAnUnboundedList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, schema, fixed string
		want                []string
	}{
		{"items through $ref",
			`{"type":"object","additionalProperties":false,"properties":{"tags":{"$ref":"#/$defs/tags"}},"$defs":{"tags":{"type":"array","items":{"type":"string"}}}}`,
			`{"type":"object","additionalProperties":false,"properties":{"tags":{"$ref":"#/$defs/tags"}},"$defs":{"tags":{"type":"array","maxItems":8,"items":{"type":"string","maxLength":32}}}}`,
			[]string{"array-without-maxItems /$defs/tags", "string-without-maxLength /$defs/tags/items"}},
		{"items that are themselves $ref",
			`{"type":"array","items":{"$ref":"#/$defs/s"},"$defs":{"s":{"type":"string"}}}`,
			`{"type":"array","maxItems":2,"items":{"$ref":"#/$defs/s"},"$defs":{"s":{"type":"string","maxLength":2}}}`,
			[]string{"array-without-maxItems /", "string-without-maxLength /$defs/s"}},
		{"nested lists",
			`{"type":"array","items":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"s":{"type":"string"}}}}}`,
			`{"type":"array","maxItems":2,"items":{"type":"array","maxItems":2,"items":{"type":"object","additionalProperties":false,"properties":{"s":{"type":"string","maxLength":2}}}}}`,
			[]string{"array-without-maxItems /", "array-without-maxItems /items", "string-without-maxLength /items/items/properties/s"}},
		{"positional items and the rest",
			`{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"array","items":{"type":"integer"}}}`,
			`{"type":"array","maxItems":3,"prefixItems":[{"type":"string","maxLength":1}],"items":{"type":"array","maxItems":1,"items":{"type":"integer"}}}`,
			[]string{"array-without-maxItems /", "array-without-maxItems /items", "string-without-maxLength /prefixItems/0"}},
		{"items absent",
			`{"type":"array"}`,
			`{"type":"array","maxItems":1,"items":{"type":"null"}}`,
			[]string{"any-value /", "array-without-maxItems /"}},
		{"maxItems that is no count",
			`{"type":"array","maxItems":"8","items":{"type":"string"}}`,
			`{"type":"array","maxItems":8,"items":{"type":"string","maxLength":1}}`,
			[]string{"array-without-maxItems /", "string-without-maxLength /items"}},
	} {
		fs, err := Audit([]byte(tt.schema))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, paths(fs)); diff != "" {
			t.Errorf("%s: Audit findings (-want +got):\n%s", tt.name, diff)
		}
		if fs, err := Audit([]byte(tt.fixed)); err != nil || len(fs) != 0 {
			t.Errorf("%s: with every finding fixed, Audit = %v, %v; want none", tt.name, paths(fs), err)
		}
	}
}

// TestWorstCaseItemsArrayIn2020 pins the trap of reading a draft-07 tuple
// (items as an array, additionalItems) in a 2020-12 document, the dialect
// of a schema without $schema: 2020-12 has no array form of items and no
// additionalItems, and the MCP Go SDK's validator (jsonschema-go) skips
// both, so ["<any string>", {...}] is valid against the schema below; it
// was bounded as [false]. In 2020-12 the array is a finding at /items; in
// draft-07 and 2019-09 it is the tuple it says.
func TestWorstCaseItemsArrayIn2020(t *testing.T) {
	t.Parallel()
	const tuple = `"type":"array","maxItems":2,"items":[{"type":"boolean"}],"additionalItems":false`
	for _, d := range []string{"", `"$schema":"https://json-schema.org/draft/2020-12/schema",`} {
		schema := `{` + d + tuple + `}`
		if n, err := WorstCase([]byte(schema), Options{}); err == nil {
			t.Errorf("WorstCase(%s) = %d, want ErrUnbounded: a 2020-12 validator does not read an items array", schema, n)
		}
		fs, err := Audit([]byte(schema))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"invalid-schema /items"}, paths(fs)); diff != "" {
			t.Errorf("Audit(%s) findings (-want +got):\n%s", schema, diff)
		}
		// No item at all: nothing to read them.
		empty := `{` + d + `"type":"array","maxItems":0,"items":[{"type":"string"}]}`
		if n, err := WorstCase([]byte(empty), Options{}); err != nil || n != 2 {
			t.Errorf("WorstCase(%s) = %d, %v; want 2 ([])", empty, n, err)
		}
	}
	for _, d := range []string{"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft/2019-09/schema"} {
		schema := `{"$schema":"` + d + `",` + tuple + `}`
		if n, err := WorstCase([]byte(schema), Options{}); err != nil || n != 7 {
			t.Errorf("WorstCase(%s) = %d, %v; want 7 ([false])", schema, n, err)
		}
	}
}

// TestAuditOpenObjectNamesEveryCeiling pins the trap of advice that leads
// to a second pass: an open object was reported with "set
// additionalProperties to false, or maxProperties", and an object given
// maxProperties alone was then reported again for its member names, strings
// without a ceiling. When the names have no ceiling either, the finding asks
// for propertyNames.maxLength too, and following it leaves no finding.
func TestAuditOpenObjectNamesEveryCeiling(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ schema, fixed string }{
		{`{"type":"object","additionalProperties":{"type":"integer"}}`,
			`{"type":"object","maxProperties":3,"propertyNames":{"maxLength":8},"additionalProperties":{"type":"integer"}}`},
		{`{"type":"object","propertyNames":{"pattern":"^x"},"additionalProperties":{"type":"null"}}`,
			`{"type":"object","maxProperties":3,"propertyNames":{"pattern":"^x","maxLength":8},"additionalProperties":{"type":"null"}}`},
	} {
		fs, err := Audit([]byte(tt.schema))
		if err != nil || len(fs) != 1 || fs[0].Kind != KindObject {
			t.Fatalf("Audit(%s) = %v, %v; want one open-object finding", tt.schema, fs, err)
		}
		for _, want := range []string{"maxProperties", "propertyNames.maxLength"} {
			if !strings.Contains(fs[0].Message, want) {
				t.Errorf("Audit(%s): %q does not ask for %s", tt.schema, fs[0].Message, want)
			}
		}
		if fs, err := Audit([]byte(tt.fixed)); err != nil || len(fs) != 0 {
			t.Errorf("Audit(%s), the advice followed = %v, %v; want none", tt.fixed, fs, err)
		}
	}
	// Names already bounded: maxProperties alone is what is missing.
	fs, _ := Audit([]byte(`{"type":"object","propertyNames":{"maxLength":8},"additionalProperties":{"type":"null"}}`))
	if len(fs) != 1 || strings.Contains(fs[0].Message, "propertyNames") {
		t.Errorf("names with a ceiling: Audit = %v; want one finding that does not ask for propertyNames", fs)
	}
}
