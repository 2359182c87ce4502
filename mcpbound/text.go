package mcpbound

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// resultText is what this package measures and cuts in a tools/call result:
// the text of its text blocks and of its embedded text resources, in order,
// joined by "\n", followed (after "\n") by the JSON serialization of its
// structuredContent unless a text block already equals that serialization,
// in which case the structured content is counted once, through that block.
// Other content (images, audio, resource links, embedded binary resources)
// is not text here: it passes unchanged and is bounded only by the HTTP
// budget.
type resultText struct {
	measured        // the joined text, and where the joins are
	structured bool // the result had structuredContent
	onlyJSON   bool // the text is the structured content's serialization alone
	images     bool // the result has image content
	rest       []mcp.Content
}

// textOf returns the measured text of r.
func textOf(r *mcp.CallToolResult) resultText {
	var t resultText
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else {
				t.rest = append(t.rest, c)
			}
		case *mcp.ImageContent:
			t.images = true
			t.rest = append(t.rest, c)
		default:
			t.rest = append(t.rest, c)
		}
	}
	if r.StructuredContent != nil {
		t.structured = true
		if js, err := json.Marshal(r.StructuredContent); err == nil {
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

// withText returns a copy of r whose text blocks and structured content are
// replaced by blocks, followed by r's other content in its order. r itself
// is not modified.
func withText(r *mcp.CallToolResult, t resultText, blocks ...mcp.Content) *mcp.CallToolResult {
	out := *r
	out.StructuredContent = nil
	out.Content = append(append(make([]mcp.Content, 0, len(blocks)+len(t.rest)), blocks...), t.rest...)
	return &out
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
