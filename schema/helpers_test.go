package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"
)

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

func paths(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind+" "+f.Path)
	}
	return out
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

func itoa(n int) string { return itoa64(int64(n)) }

func itoa64(n int64) string { b, _ := json.Marshal(n); return string(b) }

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
