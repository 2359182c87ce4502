package schema

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAuditAgreesWithWorstCase pins the trap of two walkers: Audit called
// schemas "fully bounded" that WorstCase called unbounded (an array with
// maxItems and no items, a tuple without items: false, a maxItems that is
// not a number, an unknown type, a schema that is not an object...). Audit,
// WorstCase and AuditTool must give one answer for each.
func TestAuditAgreesWithWorstCase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, schema string
		bounded      bool
	}{
		{"array with maxItems and no items", `{"type":"array","maxItems":3}`, false},
		{"tuple without items:false, room after it", `{"type":"array","prefixItems":[{"type":"boolean"}],"maxItems":3}`, false},
		{"tuple without items:false, no room after it", `{"type":"array","prefixItems":[{"type":"boolean"}],"maxItems":1}`, true},
		{"draft-07 tuple without additionalItems", `{"type":"array","items":[{"type":"null"}],"maxItems":2}`, false},
		{"maxItems a string", `{"type":"array","maxItems":"3","items":{"type":"null"}}`, false},
		{"maxItems negative", `{"type":"array","maxItems":-1,"items":{"type":"null"}}`, false},
		{"maxItems 3.0 is a whole number", `{"type":"array","maxItems":3.0,"items":{"type":"null"}}`, true},
		{"maxItems past 2^63 bytes", `{"type":"array","maxItems":1e30,"items":{"type":"string","maxLength":5}}`, false},
		{"maxLength a string", `{"type":"string","maxLength":"10"}`, false},
		{"maxItems without a type", `{"maxItems":3}`, false},
		{"unknown type", `{"type":"foo"}`, false},
		{"type a number", `{"type":3}`, false},
		{"schema true", `true`, false},
		{"schema false", `false`, true},
		{"schema a number", `3`, false},
		{"schema a string", `"string"`, false},
		{"schema an array", `[]`, false},
		{"schema null", `null`, false},
		{"empty schema", `{}`, false},
		{"string or null without maxLength", `{"type":["string","null"]}`, false},
		{"string or null with maxLength", `{"type":["string","null"],"maxLength":4}`, true},
		{"properties, additionalProperties default true", `{"type":"object","properties":{"a":{"type":"null"}}}`, false},
		{"patternProperties without maxProperties", `{"type":"object","patternProperties":{"^x":{"type":"null"}},"additionalProperties":false}`, false},
		{"maxProperties, names and values bounded", `{"type":"object","maxProperties":2,"propertyNames":{"maxLength":3},"patternProperties":{"^x":{"type":"null"}},"additionalProperties":false}`, true},
		{"maxProperties, additionalProperties absent", `{"type":"object","maxProperties":2,"propertyNames":{"maxLength":3}}`, false},
		{"maxProperties 0", `{"type":"object","maxProperties":0}`, true},
		{"$ref to an unbounded definition", `{"$ref":"#/$defs/s","$defs":{"s":{"type":"string"}}}`, false},
		{"$ref to a bounded definition", `{"$ref":"#/$defs/s","$defs":{"s":{"type":"string","maxLength":1}}}`, true},
		{"$ref beside a bounded type (2020-12 applies both)", `{"$ref":"#/$defs/s","type":"string","maxLength":3,"$defs":{"s":{"type":"string"}}}`, true},
		{"$ref beside a bounded type in draft-07 (siblings ignored)", `{"$schema":"http://json-schema.org/draft-07/schema#","$ref":"#/definitions/s","type":"string","maxLength":3,"definitions":{"s":{"type":"string"}}}`, false},
		{"unresolved $ref", `{"$ref":"#/$defs/nope"}`, false},
		{"recursive $ref", `{"$ref":"#/$defs/n","$defs":{"n":{"type":"array","maxItems":2,"items":{"$ref":"#/$defs/n"}}}}`, false},
		{"anyOf with one unbounded branch", `{"anyOf":[{"type":"null"},{"type":"string"}]}`, false},
		{"allOf with one bounded branch", `{"allOf":[{"type":"string","maxLength":2},{"type":"string"}]}`, true},
		{"oneOf bounded beside an unbounded type", `{"type":"string","oneOf":[{"const":"a"},{"const":"b"}]}`, true},
		{"not alone", `{"not":{"type":"string"}}`, false},
		{"const", `{"const":{"a":[1,2,"x"]}}`, true},
		{"enum", `{"enum":["a",null,1e9]}`, true},
		{"string with enum needs no maxLength", `{"type":"string","enum":["a","bb"]}`, true},
		{"integer", `{"type":"integer"}`, true},
		{"closed object", `{"type":"object","properties":{"a":{"type":"boolean"}},"additionalProperties":false}`, true},
	}
	for _, tt := range tests {
		doc := []byte(tt.schema)
		findings, err := Audit(doc)
		if err != nil {
			t.Fatalf("%s: Audit: %v", tt.name, err)
		}
		worst, werr := WorstCase(doc, Options{})
		report, rerr := AuditTool("t", doc, Options{})
		if rerr != nil {
			t.Fatalf("%s: AuditTool: %v", tt.name, rerr)
		}
		if got := len(findings) == 0; got != tt.bounded {
			t.Errorf("%s: Audit bounded = %v (findings %v), want %v", tt.name, got, findings, tt.bounded)
		}
		if got := werr == nil; got != tt.bounded {
			t.Errorf("%s: WorstCase = %d, %v; bounded want %v", tt.name, worst, werr, tt.bounded)
		}
		if werr != nil && !errors.Is(werr, ErrUnbounded) {
			t.Errorf("%s: WorstCase error %v does not wrap ErrUnbounded", tt.name, werr)
		}
		if diff := cmp.Diff(findings, report.Findings); diff != "" {
			t.Errorf("%s: AuditTool findings differ from Audit (-Audit +AuditTool):\n%s", tt.name, diff)
		}
		if got := report.WorstRequest > 0; got != tt.bounded {
			t.Errorf("%s: AuditTool WorstRequest = %d, bounded want %v", tt.name, report.WorstRequest, tt.bounded)
		}
		if tt.bounded {
			if want, _ := RequestWorstCase("t", doc, Options{}); report.WorstRequest != want {
				t.Errorf("%s: AuditTool WorstRequest = %d, RequestWorstCase = %d", tt.name, report.WorstRequest, want)
			}
		}
	}
}

// FuzzAuditAgrees: for any document, Audit, WorstCase and AuditTool give
// one answer, and a bound is never negative (0: no instance is valid).
func FuzzAuditAgrees(f *testing.F) {
	for _, s := range []string{
		`{"type":"array","maxItems":3}`, `{"type":"object","maxProperties":2,"propertyNames":{"maxLength":3},"additionalProperties":{"type":"integer","minimum":-1e3,"maximum":1e30}}`,
		`{"$ref":"#/$defs/n","$defs":{"n":{"anyOf":[{"type":"null"},{"$ref":"#/$defs/n"}]}}}`, `{"enum":["a",null,1e9,{"a":[1]}]}`,
		`{"type":"array","prefixItems":[{"const":1.5}],"items":false}`, `{"allOf":[{"type":"string","maxLength":2},{"$ref":"#"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		findings, err := Audit(doc)
		if err != nil {
			return
		}
		worst, werr := WorstCase(doc, Options{})
		report, _ := AuditTool("t", doc, Options{})
		bounded := len(findings) == 0
		if (werr == nil) != bounded || (report.WorstRequest > 0) != bounded || len(report.Findings) != len(findings) {
			t.Fatalf("disagree on %s: Audit %v, WorstCase %d %v, AuditTool %+v", doc, findings, worst, werr, report)
		}
		if bounded && worst < 0 {
			t.Fatalf("WorstCase(%s) = %d", doc, worst)
		}
	})
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
