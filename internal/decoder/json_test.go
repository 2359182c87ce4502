package decoder

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/boundhttp/boundhttp/limits"
)

func checkJSON(s string, l limits.JSON) error {
	return CheckJSON(strings.NewReader(s), l)
}

func TestCheckJSONSyntax(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		`0`, `-0`, `1.5e+10`, `-12.0E-3`, `"x"`, `true`, `false`, `null`, ` {} `, `[]`, `[1,2,[3,{"a":[]}]]`,
		`{"a":1,"b":{"c":"d\"\\\/\b\f\n\r\t\u00e9"}}`, "\t\n\r [ 1 ] \n", `"\ud83d\ude00"`, `{"":""}`, `1e5`, `[0.5]`,
	} {
		if err := checkJSON(doc, limits.JSON{}); err != nil {
			t.Errorf("CheckJSON(%q) = %v, want nil", doc, err)
		}
		if !json.Valid([]byte(doc)) {
			t.Errorf("json.Valid(%q) = false: the test case is wrong", doc)
		}
	}
	for _, doc := range []string{
		``, ` `, `{`, `[`, `]`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `1e+`, `+1`,
		`"abc`, `"a` + "\x01" + `"`, `"\x"`, `"\u12G4"`, `tru`, `nul`, `truex`, `[1 2]`, `{"a":1 "b":2}`, `1 2`, `{} {}`, `[}`, `{]`, `"a"x`,
	} {
		err := checkJSON(doc, limits.JSON{})
		var e *limits.Error
		if !errors.As(err, &e) || e.Stage != limits.StageIntegrity || e.Field != "syntax" {
			t.Errorf("CheckJSON(%q) = %v, want a syntax error", doc, err)
		}
		if json.Valid([]byte(doc)) {
			t.Errorf("json.Valid(%q) = true: the test case is wrong", doc)
		}
	}
}

// TestCheckJSONLimits: N passes each limit, N+1 fails, with the field and
// the JSON Pointer of where it tripped.
func TestCheckJSONLimits(t *testing.T) {
	t.Parallel()
	const n = 5
	l := limits.JSON{MaxDepth: n, MaxArrayLen: n, MaxStringLen: n, MaxObjectMembers: n}
	members := func(k int) string {
		var parts []string
		for i := range k {
			parts = append(parts, `"k`+strconv.Itoa(i)+`":0`)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	tests := []struct {
		doc, field, pointer string
		observed            int64
	}{
		{strings.Repeat("[", n) + strings.Repeat("]", n), "", "", 0},
		{strings.Repeat("[", n+1) + strings.Repeat("]", n+1), "MaxDepth", "/0/0/0/0/0", n + 1},
		{`{"a":[{"b":` + strings.Repeat("[", n-3) + strings.Repeat("]", n-3) + `}]}`, "", "", 0},
		{`{"a":[{"b":` + strings.Repeat("[", n-2) + strings.Repeat("]", n-2) + `}]}`, "MaxDepth", "/a/0/b/0/0", n + 1},
		{`[1,2,3,4,5]`, "", "", 0},
		{`[1,2,3,4,5,6]`, "MaxArrayLen", "/5", n + 1},
		{`{"x":{"y/~z":[0,0,0,0,0,0]}}`, "MaxArrayLen", "/x/y~1~0z/5", n + 1},
		{`["12345"]`, "", "", 0},
		{`["123456"]`, "MaxStringLen", "/0", n + 1},
		{`{"12345":"123456"}`, "MaxStringLen", "/12345", n + 1},
		{`{"123456":1}`, "MaxStringLen", "/123456", n + 1},
		{members(n), "", "", 0},
		{members(n + 1), "MaxObjectMembers", "/k5", n + 1},
	}
	for _, tt := range tests {
		err := checkJSON(tt.doc, l)
		if tt.field == "" {
			if err != nil {
				t.Errorf("CheckJSON(%s) = %v, want nil", tt.doc, err)
			}
			continue
		}
		var e *limits.Error
		if !errors.As(err, &e) || e.Stage != limits.StageJSON || e.Field != tt.field || e.Pointer != tt.pointer ||
			e.Limit != n || e.Observed != tt.observed || !errors.Is(err, limits.ErrTooLarge) {
			t.Errorf("CheckJSON(%s) = %v, want %s at %q observed %d", tt.doc, err, tt.field, tt.pointer, tt.observed)
		}
	}
	if _, err := NewJSONChecker(limits.JSON{MaxDepth: -1}); err == nil {
		t.Errorf("NewJSONChecker(MaxDepth -1) = nil error")
	}
	// Zero means the default, not unlimited.
	deep := strings.Repeat("[", limits.DefaultMaxJSONDepth+1) + strings.Repeat("]", limits.DefaultMaxJSONDepth+1)
	if err := checkJSON(deep, limits.JSON{}); err == nil {
		t.Errorf("CheckJSON(depth default+1, zero limits) = nil, want MaxDepth")
	}
}

// TestCheckJSONSplitWrites: the verdict does not depend on how the
// document is cut into writes.
func TestCheckJSONSplitWrites(t *testing.T) {
	t.Parallel()
	doc := `{"a":[1,-2.5e+3,"x\u00e9\"y",true,false,null,{"b":{}}],"c":"` + strings.Repeat("z", 100) + `"}`
	for _, err := range []error{
		CheckJSON(iotest.OneByteReader(strings.NewReader(doc)), limits.JSON{}),
		CheckJSON(iotest.HalfReader(strings.NewReader(doc)), limits.JSON{}),
	} {
		if err != nil {
			t.Errorf("CheckJSON(split) = %v", err)
		}
	}
	err := CheckJSON(iotest.OneByteReader(strings.NewReader(doc)), limits.JSON{MaxStringLen: 99})
	var e *limits.Error
	if !errors.As(err, &e) || e.Field != "MaxStringLen" || e.Pointer != "/c" {
		t.Errorf("CheckJSON(one byte at a time, MaxStringLen 99) = %v, want MaxStringLen at /c", err)
	}
}

// FuzzCheckJSON: CheckJSON agrees with json.Valid on syntax whenever no
// shape limit trips, and never reports a breach for documents within them.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":"c"}]}`, `[1e5,-0.5,"\u00e9"]`, `"x"`, `{"a":}`, `[[[[]]]]`, `0`, `tru`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		err := CheckJSON(bytes.NewReader(doc), limits.JSON{MaxDepth: 1000, MaxArrayLen: 1 << 20, MaxStringLen: 1 << 20, MaxObjectMembers: 1 << 20})
		var e *limits.Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("CheckJSON: %v is not a *limits.Error", err)
		}
		if err != nil && e.Stage == limits.StageJSON {
			return
		}
		if valid := json.Valid(doc); valid != (err == nil) {
			t.Fatalf("CheckJSON(%q) = %v, json.Valid = %v", doc, err, valid)
		}
	})
}

// BenchmarkCheckJSON compares CheckJSON with json.Valid on the same
// document (about 4 MiB of JSON lines wrapped in an array).
func BenchmarkCheckJSON(b *testing.B) {
	doc := append([]byte("["), bytes.ReplaceAll(bytes.TrimSpace(text(4 << 20)[:4<<20-200]), []byte("\n"), []byte(","))...)
	doc = doc[:bytes.LastIndexByte(doc, '}')+1]
	doc = append(doc, ']')
	if !json.Valid(doc) {
		b.Fatal("benchmark document is not valid JSON")
	}
	l := limits.JSON{MaxArrayLen: 1 << 20}
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			json.Valid(doc)
		}
	})
	b.Run("CheckJSON", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckJSON(bytes.NewReader(doc), l); err != nil {
				b.Fatal(err)
			}
		}
	})
}
