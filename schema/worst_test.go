package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rawNumber is a number written as given (a Python float's "5.0", a
// Python int's digits), as json.Number lets encoding/json write it.
type rawNumber = json.Number

// wholeForms returns a whole number as clients write it: as an int (Go,
// Python), as a float64 (Go, JavaScript: 1e+21 and up in exponent form),
// and as a Python float (5.0, -0.0).
func wholeForms(z *big.Int) []any {
	out := []any{rawNumber(z.String())}
	f, _ := new(big.Float).SetInt(z).Float64()
	out = append(out, f)
	if math.Abs(f) < 1e16 {
		out = append(out, rawNumber(strconv.FormatFloat(f, 'f', 1, 64)))
	}
	if z.Sign() == 0 {
		out = append(out, rawNumber("-0.0"))
	}
	return out
}

// TestWorstCaseCountsDigitsNotLiterals pins the trap of measuring a
// number by the literal in the schema: {"type":"integer","minimum":0,
// "maximum":1e9} was bounded at 3 bytes (len("1e9")) while 999999999 takes
// 9 and 1000000000 takes 10. For integer ranges (negative, exclusive,
// fractional and exponent limits), the whole numbers at and next to both
// ends, and zero, in every form a client writes them, must fit the bound.
func TestWorstCaseCountsDigitsNotLiterals(t *testing.T) {
	t.Parallel()
	ranges := []struct{ lo, hi string }{
		{"0", "1e9"}, {"-1e9", "0"}, {"-5", "5"}, {"0", "9"}, {"0", "10"}, {"1e2", "1.5e3"}, {"0", "1E+3"},
		{"-2147483648", "2147483647"}, {"0", "9007199254740991"}, {"-9223372036854775808", "9223372036854775807"},
		{"0.5", "99.5"}, {"-99.5", "-0.5"}, {"0", "1e21"}, {"-1e25", "1e25"}, {"1e-3", "12345.678e3"},
	}
	for _, r := range ranges {
		lo, _ := new(big.Rat).SetString(r.lo)
		hi, _ := new(big.Rat).SetString(r.hi)
		first := ceil(lo)
		last := floor(hi)
		var instances []any
		for _, z := range []*big.Int{first, last, new(big.Int).Add(first, big.NewInt(1)), new(big.Int).Sub(last, big.NewInt(1)), big.NewInt(0)} {
			if z.Cmp(first) >= 0 && z.Cmp(last) <= 0 {
				instances = append(instances, wholeForms(z)...)
			}
		}
		for _, kw := range [][2]string{{"minimum", "maximum"}, {"exclusiveMinimum", "exclusiveMaximum"}} {
			for _, typ := range []string{"integer", "number"} {
				schema := fmt.Sprintf(`{"type":%q,%q:%s,%q:%s}`, typ, kw[0], r.lo, kw[1], r.hi)
				checkNotBelow(t, schema, Options{}, instances...)
				checkNotBelow(t, fmt.Sprintf(`{"type":"array","maxItems":2,"items":%s}`, schema), Options{}, []any{instances[0], instances[len(instances)-1]})
			}
		}
		checkNotBelow(t, fmt.Sprintf(`{"enum":[%s,%s]}`, r.lo, r.hi), Options{}, wholeForms(ceil(hi))[0])
		checkNotBelow(t, fmt.Sprintf(`{"const":%s}`, r.lo), Options{}, append(wholeForms(floor(lo)), wholeForms(ceil(lo))...)[:1]...)
	}
	// Numbers that need not be whole: the longest float64 forms.
	floats := []any{-math.MaxFloat64, -1.2345678901234567e-06, -math.SmallestNonzeroFloat64, -2.2250738585072014e-308, -123456789012345680000.0}
	checkNotBelow(t, `{"type":"number"}`, Options{}, floats...)
	checkNotBelow(t, `{"type":"integer"}`, Options{}, floats[0], float64(math.MinInt64), int64(math.MinInt64), rawNumber("-9007199254740991.0"))
	checkNotBelow(t, `{"type":"number","minimum":-1,"maximum":1}`, Options{}, -1.2345678901234567e-06)
}

func floor(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	_ = m
	return q // Euclidean division by a positive denominator floors
}

func ceil(r *big.Rat) *big.Int {
	return new(big.Int).Neg(floor(new(big.Rat).Neg(r)))
}

// TestWorstCaseNotBelowAnyInstance generates, at every cap from 0 to 12,
// the largest instances of strings, arrays, tuples and objects, written by
// Go and Python, and asserts that none is longer than WorstCase, and that
// the largest reaches it (the bound is tight where it can be).
func TestWorstCaseNotBelowAnyInstance(t *testing.T) {
	t.Parallel()
	// Characters at their longest: escaped by Go (<, \x01, U+2028), escaped
	// by everyone (", \), multi-byte UTF-8, and beyond the BMP.
	chars := []string{"<", "&", "\x01", "\n", `"`, `\`, "é", "€", "\u2028", "😀", "a"}
	fill := func(n int) []any {
		var out []any
		for _, c := range chars {
			out = append(out, strings.Repeat(c, n))
		}
		return out
	}
	for _, o := range []Options{{}, {UTF8: true}} {
		for n := range 13 {
			str := fmt.Sprintf(`{"type":"string","maxLength":%d}`, n)
			got := checkNotBelow(t, str, o, fill(n)...)
			if w, _ := WorstCase([]byte(str), o); int64(got) != w {
				t.Errorf("WorstCase(%s, %+v) = %d, the largest instance takes %d", str, o, w, got)
			}
			arr := fmt.Sprintf(`{"type":"array","maxItems":%d,"items":{"type":"string","maxLength":2}}`, n)
			var items []any
			for _, s := range fill(2) {
				items = append(items, repeat(s, n))
			}
			checkNotBelow(t, arr, o, items...)

			tuple := fmt.Sprintf(`{"type":"array","maxItems":%d,"prefixItems":[{"type":"boolean"},{"const":"<é"}],"items":{"type":"integer","minimum":-1e3,"maximum":1e3}}`, n)
			inst := []any{}
			for i := range n {
				switch i {
				case 0:
					inst = append(inst, false)
				case 1:
					inst = append(inst, "<é")
				default:
					inst = append(inst, -1000)
				}
			}
			checkNotBelow(t, tuple, o, inst)

			// An open object: n members, names of up to 3 characters, values
			// strings of up to 2.
			obj := fmt.Sprintf(`{"type":"object","maxProperties":%d,"propertyNames":{"maxLength":3},"additionalProperties":{"type":"string","maxLength":2}}`, n)
			for _, c := range chars {
				m := map[string]any{}
				for i := range n {
					m[strings.Repeat(c, 2)+string(rune(0x01+i))] = strings.Repeat(c, 2)
				}
				checkNotBelow(t, obj, o, m)
			}
		}
		closed := `{"type":"object","additionalProperties":false,"properties":{"a<b":{"type":"string","maxLength":3},"é😀":{"type":"null"},"n":{"type":"integer","minimum":-5,"maximum":1e9}}}`
		for _, c := range chars {
			checkNotBelow(t, closed, o, map[string]any{"a<b": strings.Repeat(c, 3), "é😀": nil, "n": 1000000000})
		}
	}
}

func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// countTool is the input schema of examples/mcp's count tool with its text
// capped at n characters.
func countTool(n int) string {
	return fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["text"],"properties":{
		"text":{"type":"string","maxLength":%d},
		"tags":{"type":"array","maxItems":8,"items":{"type":"string","maxLength":32}}}}`, n)
}

// largestCount is the largest tools/call request of the count tool capped
// at n: every character an emoji, beyond the Basic Multilingual Plane.
func largestCount(n int) map[string]any {
	tags := make([]any, 8)
	for i := range tags {
		tags[i] = strings.Repeat("😀", 32)
	}
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "count", "arguments": map[string]any{"text": strings.Repeat("😀", n), "tags": tags}}}
}

// TestRequestWorstCaseCoversEscapingClients pins the trap of sizing strings
// for UTF-8 only: the Python MCP SDK posts with httpx's json=, which before
// httpx 0.28 writes json.dumps with ensure_ascii, 12 bytes for an emoji
// (\ud83d\ude00), not 4. The count tool capped at 30,000 characters was
// audited at 181,887 bytes while a Python client sent 360,107 and met a
// 413. For each cap, the largest request as that client writes it must fit
// the default bound; as a UTF-8 client writes it, the UTF8 bound, which is
// below the escaped size (so UTF8 is no default). When python3 is
// installed, json.dumps itself writes the escaped form, byte for byte.
func TestRequestWorstCaseCoversEscapingClients(t *testing.T) {
	t.Parallel()
	python, _ := exec.LookPath("python3")
	if python == "" {
		t.Log("python3 not installed: the escaped form is checked as Go writes it only")
	}
	for _, n := range []int{0, 1, 2, 1000, 16000, 30000} {
		doc := []byte(countTool(n))
		req := largestCount(n)
		escaped := escapeNonASCII(pythonJSON(req))
		plain := pythonJSON(req)
		if python != "" {
			raw, _ := json.Marshal(req)
			cmd := exec.Command(python, "-c", "import json, sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read())))")
			cmd.Stdin = strings.NewReader(string(raw))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("python3: %v", err)
			}
			if string(out) != escaped {
				t.Fatalf("cap %d: json.dumps writes %d bytes, the test's escaped form %d", n, len(out), len(escaped))
			}
		}
		def, err := RequestWorstCase("count", doc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		utf8, err := RequestWorstCase("count", doc, Options{UTF8: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := AuditTool("count", doc, Options{})
		if err != nil || r.WorstRequest != def {
			t.Errorf("cap %d: AuditTool = %+v, %v; want the worst request %d", n, r, err, def)
		}
		t.Logf("cap %6d: escaped request %7d bytes, default bound %7d; UTF-8 request %7d, UTF8 bound %7d", n, len(escaped), def, len(plain), utf8)
		if def < int64(len(escaped)) {
			t.Errorf("cap %d: the default bound %d is below the request a Python client sends, %d bytes", n, def, len(escaped))
		}
		if utf8 < int64(len(plain)) {
			t.Errorf("cap %d: the UTF8 bound %d is below the request a UTF-8 client sends, %d bytes", n, utf8, len(plain))
		}
		if n >= 1000 && utf8 >= int64(len(escaped)) {
			t.Errorf("cap %d: the UTF8 bound %d covers the escaped request (%d bytes): the test no longer tells the sizings apart", n, utf8, len(escaped))
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
