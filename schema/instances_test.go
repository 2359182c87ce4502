package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// forms returns the ways clients write v: Go's encoding/json (which
// escapes <, > and & as \u003c...), Python's json.dumps with its ", " and
// ": " separators, and, when escaped, json.dumps with ensure_ascii (every
// character outside space to tilde as \uXXXX, a surrogate pair beyond the
// BMP), as the Python MCP SDK sends it over httpx before 0.28.
func forms(v any, escaped bool) []string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	out := []string{string(b), pythonJSON(v)}
	if escaped {
		out = append(out, escapeNonASCII(pythonJSON(v)))
	}
	return out
}

// escapeNonASCII writes every character of the JSON text s outside space
// to tilde as \uXXXX, as json.dumps with ensure_ascii does (DEL too), a
// surrogate pair beyond the BMP.
func escapeNonASCII(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x7f {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

// checkNotBelow asserts that no form of any instance is longer than
// WorstCase of schema, and returns the longest form seen.
func checkNotBelow(t *testing.T, schema string, o Options, instances ...any) int {
	t.Helper()
	worst, err := WorstCase([]byte(schema), o)
	if err != nil {
		t.Fatalf("WorstCase(%s) = %v", schema, err)
	}
	longest := 0
	for _, v := range instances {
		for _, f := range forms(v, !o.UTF8) {
			longest = max(longest, len(f))
			if int64(len(f)) > worst {
				t.Errorf("WorstCase(%s, %+v) = %d, below the valid instance %s (%d bytes)", schema, o, worst, f, len(f))
			}
		}
	}
	return longest
}

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
