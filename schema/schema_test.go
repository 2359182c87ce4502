package schema

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/boundhttp/boundhttp/limits"
)

func paths(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.Path)
	}
	return out
}

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

// TestWorstCaseReached builds, for a few schemas, the largest instance by
// hand and serialises it with Python's separators: it must reach the bound
// exactly, so the bound is tight as well as safe.
func TestWorstCaseReached(t *testing.T) {
	t.Parallel()
	for _, enc := range []struct {
		o     Options
		char  string // a character at its longest
		write func(any) string
	}{
		// Escaped by everyone as \u0001: 6 bytes.
		{Options{UTF8: true}, "\x01", pythonJSON},
		// Escaped by json.dumps with ensure_ascii as \ud83d\ude00: 12 bytes.
		{Options{}, "😀", func(v any) string { return escapeNonASCII(pythonJSON(v)) }},
	} {
		c := func(n int) string { return strings.Repeat(enc.char, n) }
		tests := []struct {
			schema   string
			instance any
		}{
			{`{"type":"string","maxLength":10}`, c(10)},
			{`{"type":"array","maxItems":3,"items":{"type":"string","maxLength":2}}`, []any{c(2), c(2), c(2)}},
			{`{"type":"object","additionalProperties":false,"properties":{"q":{"type":"string","maxLength":4},"b":{"type":"boolean"},"z":{"type":"null"}}}`,
				map[string]any{"q": c(4), "b": false, "z": nil}},
			{`{"type":"string","enum":["a","bcd"]}`, "bcd"},
			{`{"type":"array","prefixItems":[{"type":"boolean"},{"type":"string","maxLength":1}],"items":false}`, []any{false, c(1)}},
		}
		for _, tt := range tests {
			worst, err := WorstCase([]byte(tt.schema), enc.o)
			if err != nil {
				t.Fatalf("WorstCase(%s) = %v", tt.schema, err)
			}
			if got := int64(len(enc.write(tt.instance))); got != worst {
				t.Errorf("WorstCase(%s, %+v) = %d, the largest instance takes %d (%s)", tt.schema, enc.o, worst, got, enc.write(tt.instance))
			}
		}
	}
	for _, tt := range []struct {
		o    Options
		want int64
	}{{Options{}, 2 + 12*10}, {Options{UTF8: true}, 2 + 6*10}} {
		if n, err := WorstCase([]byte(`{"type":"string","maxLength":10}`), tt.o); err != nil || n != tt.want {
			t.Errorf("WorstCase(maxLength 10, %+v) = %d, %v; want %d", tt.o, n, err, tt.want)
		}
	}
	_, err := WorstCase([]byte(`{"type":"array"}`), Options{})
	if !errors.Is(err, ErrUnbounded) || !strings.Contains(err.Error(), "array without maxItems") {
		t.Errorf("WorstCase(unbounded array) = %v, want ErrUnbounded naming the array", err)
	}
}

// pythonJSON serialises v with ", " and ": " separators, as Python's
// json.dumps does by default.
func pythonJSON(v any) string {
	b, _ := json.Marshal(v)
	var out strings.Builder
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		out.WriteByte(c)
		switch {
		case inStr && c == '\\':
			i++
			out.WriteByte(b[i])
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.String()
}

const searchTool = `{"type":"object","additionalProperties":false,"properties":{
	"query":{"type":"string","maxLength":2000},
	"urls":{"type":"array","maxItems":%d,"items":{"type":"string","maxLength":2048}}}}`

func TestCheckBudget(t *testing.T) {
	t.Parallel()
	schemaWith := func(maxURLs int) []byte { return []byte(strings.Replace(searchTool, "%d", itoa(maxURLs), 1)) }
	worst := func(maxURLs int) int64 {
		n, err := RequestWorstCase("search", schemaWith(maxURLs), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	b := limits.Budget{MaxWireBytes: 1 << 20, MaxDecodedBytes: 1 << 20}
	if err := CheckBudget(worst(20), b, DefaultHeadroom); err != nil {
		t.Errorf("20 URLs under 1 MiB: %v, want nil", err)
	}
	// A cap raised past what the transport carries fails.
	err := CheckBudget(worst(100), b, DefaultHeadroom)
	if err == nil || !strings.Contains(err.Error(), itoa64(worst(100))) || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("100 URLs under 1 MiB: %v, want an error naming %d and 1048576", err, worst(100))
	}
	// A transport tightened beneath the cap fails too.
	tight := limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 1 << 20}
	if err := CheckBudget(worst(20), tight, DefaultHeadroom); err == nil || !strings.Contains(err.Error(), "MaxWireBytes of 524288") {
		t.Errorf("20 URLs, wire 512 KiB: %v, want MaxWireBytes error", err)
	}
	// The boundary: exactly fitting with headroom passes, one byte less fails.
	w := worst(20)
	need := w + (w+3)/4
	if err := CheckBudget(w, limits.Budget{MaxWireBytes: need, MaxDecodedBytes: need}, 0.25); err != nil {
		t.Errorf("limit = need %d: %v", need, err)
	}
	if err := CheckBudget(w, limits.Budget{MaxWireBytes: need - 1, MaxDecodedBytes: need}, 0.25); err == nil {
		t.Errorf("limit = need-1: nil error")
	}
	if err := CheckBudget(w, limits.Budget{MaxDecodedRunes: w}, 0.25); err == nil {
		t.Errorf("character cap below the request: nil error")
	}
	if err := CheckBudget(w, b, -1); err == nil {
		t.Errorf("negative headroom: nil error")
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

// TestToolReportCheckIsCheckBudget: the two names are one check, a
// report's Check being CheckBudget of its worst request with the tool's
// name in front, at every limit of the boundary table (0 is the default
// 4 MiB, negative is invalid) and for the headroom CheckBudget refuses.
func TestToolReportCheckIsCheckBudget(t *testing.T) {
	t.Parallel()
	r, err := AuditTool("search", []byte(strings.Replace(searchTool, "%d", "20", 1)), Options{})
	if err != nil || len(r.Findings) != 0 {
		t.Fatal(r.Findings, err)
	}
	need := r.WorstRequest + (r.WorstRequest+3)/4
	for _, tt := range []struct {
		limit    int64
		headroom float64
		fits     bool
	}{
		{0, 0.25, true}, {-1, 0.25, false}, {need - 1, 0.25, false}, {need, 0.25, true}, {need + 1, 0.25, true},
		{math.MaxInt64, 0.25, true}, {need, -0.5, false}, {need, math.NaN(), false},
	} {
		b := limits.Budget{MaxWireBytes: tt.limit, MaxDecodedBytes: tt.limit}
		direct, checked := CheckBudget(r.WorstRequest, b, tt.headroom), r.Check(b, tt.headroom)
		if (direct == nil) != tt.fits || (checked == nil) != tt.fits {
			t.Errorf("limit %d, headroom %v: CheckBudget %v, Check %v; want fits %v", tt.limit, tt.headroom, direct, checked, tt.fits)
			continue
		}
		if direct != nil && checked.Error() != `tool "search": `+direct.Error() {
			t.Errorf("limit %d: Check says %q, CheckBudget %q", tt.limit, checked, direct)
		}
	}
}

func itoa(n int) string     { return itoa64(int64(n)) }
func itoa64(n int64) string { b, _ := json.Marshal(n); return string(b) }
