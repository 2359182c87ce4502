package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/boundhttp/boundhttp/limits"
)

func TestAudit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema string
		want         []string
	}{
		{"bounded", `{"type":"object","properties":{"q":{"type":"string","maxLength":100},"n":{"type":"integer"},
			"tags":{"type":"array","maxItems":10,"items":{"type":"string","maxLength":20}}},"additionalProperties":false}`, nil},
		{"optional list that accepts [] (a floor is not a ceiling)", `{"type":"object","properties":{"ids":{"type":"array","maxItems":5,"items":{"type":"integer"}}},"additionalProperties":false}`, nil},
		{"list without ceiling", `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`,
			[]string{"array-without-maxItems /properties/ids"}},
		{"list bounded only inside a nested object", `{"type":"object","additionalProperties":false,"properties":{
			"rows":{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{
				"cells":{"type":"array","maxItems":4,"items":{"type":"string","maxLength":8}}}}}}}`,
			[]string{"array-without-maxItems /properties/rows"}},
		{"nested list unbounded inside a bounded one", `{"type":"object","additionalProperties":false,"properties":{
			"rows":{"type":"array","maxItems":3,"items":{"type":"object","additionalProperties":false,"properties":{
				"cells":{"type":"array","items":{"type":"string","maxLength":8}}}}}}}`,
			[]string{"array-without-maxItems /properties/rows/items/properties/cells"}},
		{"string and open object", `{"type":"object","properties":{"s":{"type":"string"}}}`,
			[]string{"open-object /", "string-without-maxLength /properties/s"}},
		{"enum needs no maxLength", `{"type":"object","properties":{"mode":{"type":"string","enum":["a","bb"]}},"additionalProperties":false}`, nil},
		{"untyped", `{"type":"object","properties":{"any":{}},"additionalProperties":false}`, []string{"any-value /properties/any"}},
		{"$ref", `{"type":"object","additionalProperties":false,"properties":{"p":{"$ref":"#/$defs/point"},"q":{"$ref":"#/$defs/list"}},
			"$defs":{"point":{"type":"object","additionalProperties":false,"properties":{"x":{"type":"number"}}},
			"list":{"type":"array","items":{"$ref":"#/$defs/point"}}}}`,
			[]string{"array-without-maxItems /$defs/list"}},
		{"recursive $ref", `{"$ref":"#/$defs/node","$defs":{"node":{"type":"object","additionalProperties":false,"properties":{
			"kids":{"type":"array","maxItems":2,"items":{"$ref":"#/$defs/node"}}}}}}`,
			[]string{"recursive-ref /$defs/node/properties/kids/items"}},
		{"unresolved $ref", `{"$ref":"#/definitions/missing"}`, []string{"unresolved-ref /"}},
		{"anyOf, allOf", `{"anyOf":[{"type":"string","maxLength":3},{"type":"array"}],"allOf":[{"type":"string"}]}`,
			[]string{"string-without-maxLength /allOf/0", "any-value /anyOf/1", "array-without-maxItems /anyOf/1"}},
		{"tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"integer"},{"type":"string"}],"additionalItems":false}`,
			[]string{"string-without-maxLength /items/1"}},
		{"tuple items in 2020-12 (no $schema), which has no such tuple", `{"type":"array","items":[{"type":"integer"},{"type":"string"}],"additionalItems":false}`,
			[]string{"array-without-maxItems /", "invalid-schema /items", "string-without-maxLength /items/1"}},
		{"prefixItems", `{"type":"array","prefixItems":[{"type":"integer"}],"items":false}`, nil},
		{"maxProperties without name ceiling", `{"type":"object","maxProperties":3,"additionalProperties":{"type":"integer"}}`,
			[]string{"open-object /"}},
		{"maxProperties with name ceiling", `{"type":"object","maxProperties":3,"propertyNames":{"maxLength":10},"additionalProperties":{"type":"integer"}}`, nil},
		{"true schema", `true`, []string{"any-value /"}},
	}
	for _, tt := range tests {
		fs, err := Audit([]byte(tt.schema))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, paths(fs)); diff != "" {
			t.Errorf("%s: Audit findings (-want +got):\n%s", tt.name, diff)
		}
	}
	if _, err := Audit([]byte(`{"type":`)); err == nil {
		t.Errorf("Audit(broken JSON) = nil error")
	}
}

// TestAuditManyLines: the audit reads JSON, not lines: a schema written
// across many lines, in any layout, gives the same findings.
func TestAuditManyLines(t *testing.T) {
	t.Parallel()
	compact := `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"}},"name":{"type":"string","maxLength":9}},"additionalProperties":false}`
	var v any
	json.Unmarshal([]byte(compact), &v)
	pretty, _ := json.MarshalIndent(v, "", "    ")
	odd := strings.NewReplacer(`:`, "\n:\n", `,`, "\n\t,\n").Replace(compact)
	want, _ := Audit([]byte(compact))
	for _, doc := range []string{string(pretty), odd} {
		got, err := Audit([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" || len(got) != 1 {
			t.Errorf("Audit(multi-line) differs (-compact +multi-line):\n%s", diff)
		}
	}
}

func TestAuditTools(t *testing.T) {
	t.Parallel()
	list := `{"jsonrpc":"2.0","id":1,"result":{"tools":[
		{"name":"search","inputSchema":` + strings.Replace(searchTool, "%d", "20", 1) + `},
		{"name":"bulk","inputSchema":{"type":"object","properties":{"ids":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}}]}}`
	reports, err := AuditTools([]byte(list), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 || reports[0].Name != "search" || len(reports[0].Findings) != 0 || reports[0].WorstRequest == 0 {
		t.Fatalf("reports = %+v", reports)
	}
	if diff := cmp.Diff([]string{"array-without-maxItems /result/tools/1/inputSchema/properties/ids"}, paths(reports[1].Findings)); diff != "" {
		t.Errorf("bulk findings (-want +got):\n%s", diff)
	}
	if err := reports[1].Check(limits.Budget{}, DefaultHeadroom); !errors.Is(err, ErrUnbounded) {
		t.Errorf("Check(unbounded tool) = %v", err)
	}
	if err := reports[0].Check(limits.Budget{}, DefaultHeadroom); err != nil {
		t.Errorf("Check(search under defaults) = %v", err)
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
		if err == nil {
			t.Errorf("WorstCase(%q) = %d, nil; want the document refused (the bound of %s, %d bytes valid in JavaScript, would be %v)",
				tt.schema, worst, tt.js, len(tt.js), worst >= int64(len(tt.js)))
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
