package mcpcore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// resultText is what the core measures and cuts in a tools/call result: the
// text of its text items, in order, joined by "\n", followed (after "\n")
// by the JSON serialization of its structured content unless a text item
// already equals that serialization, in which case the structured content
// is counted once, through that item. Other content (images, audio,
// resource links, embedded binary resources) is not text here: it passes
// unchanged and is bounded only by the HTTP budget.
type resultText struct {
	measured        // the joined text, and where the joins are
	structured bool // the result had structured content
	onlyJSON   bool // the text is the structured content's serialization alone
	images     bool // the result has image content
	rest       []int
}

// textOf returns the measured text of r.
func textOf(r Result) resultText {
	var t resultText
	var parts []string
	for i, c := range r.Content {
		switch c.Kind {
		case Text:
			parts = append(parts, c.Text)
			continue
		case Image:
			t.images = true
		}
		t.rest = append(t.rest, i)
	}
	if r.Structured != nil {
		t.structured = true
		if js, err := json.Marshal(r.Structured); err == nil {
			i := slices.Index(parts, string(js))
			if i < 0 {
				i = slices.IndexFunc(parts, func(p string) bool { return sameJSON(p, js) })
			}
			if i < 0 {
				parts = append(parts, string(js))
				i = len(parts) - 1
			}
			t.onlyJSON = len(parts) == 1 && i == 0
		}
	}
	for i, p := range parts {
		parts[i] = wireText(p)
	}
	t.measured = measure(parts)
	return t
}

// wireText returns s as a JSON encoder sends it: each byte that is not part
// of a valid UTF-8 sequence replaced by U+FFFD (encoding/json does this),
// so that byte counts and kept results describe what a client receives.
// The character count is unchanged: an invalid byte is one character.
func wireText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError
	}
	return b.String()
}

// sameJSON reports whether text is a JSON serialization of the same value as
// js, whatever its key order, spacing or escaping: a client receives
// structuredContent as a map, whose serialization sorts the keys, while the
// tool's text copy keeps the order the tool wrote.
func sameJSON(text string, js []byte) bool {
	if !json.Valid([]byte(text)) {
		return false
	}
	var a, b any
	da, db := json.NewDecoder(strings.NewReader(text)), json.NewDecoder(bytes.NewReader(js))
	da.UseNumber()
	db.UseNumber()
	return da.Decode(&a) == nil && db.Decode(&b) == nil && reflect.DeepEqual(a, b)
}
