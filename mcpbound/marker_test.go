package mcpbound

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// letters returns how many of the result's letters (a and b) out shows,
// the marker's own letters not counted.
func letters(out string) int {
	h, rest, _ := strings.Cut(out, "\n[truncated: ")
	_, tl, _ := strings.Cut(rest, "]\n")
	return strings.Count(h+tl, "a") + strings.Count(h+tl, "b")
}

// twoBlocks is a result of two text blocks of n characters each, and an
// image when img is set.
func twoBlocks(n int, img bool) *mcp.CallToolResult {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("a", n)}, &mcp.TextContent{Text: strings.Repeat("b", n)}}}
	if img {
		r.Content = append(r.Content, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")})
	}
	return r
}

// TestMarkerCountsResultCharacters: M is the number of characters the
// result had, never the newline that joins two text blocks in the cut
// (two blocks of 12,000 are 24,000), and N counts the result's characters
// shown; a result of exactly the cap in two blocks passes. Sabotage:
// counting the joined text makes M 24,001 and cuts the 10,000 + 10,000
// result.
func TestMarkerCountsResultCharacters(t *testing.T) {
	server := ServerLimits{MaxResultChars: 20000}.Middleware()
	at := twoBlocks(10000, false)
	if out := serverCall(t, server, at); out != at {
		t.Errorf("server: two blocks of 10,000 characters, cap 20,000, were cut")
	}
	out := onlyText(t, serverCall(t, server, twoBlocks(12000, false)))
	if n, m := parseMarker(t, out); m != 24000 || n != letters(out) {
		t.Errorf("server: marker %d of %d, want M 24000 and N the letters shown", n, m)
	}
	tail := onlyText(t, serverCall(t, ServerLimits{MaxResultChars: 20000, TailChars: 13000}.Middleware(), twoBlocks(12000, false)))
	if n, m := parseMarker(t, tail); m != 24000 || n != letters(tail) {
		t.Errorf("server, head and tail across the join: marker %d of %d, shown %d", n, m, letters(tail))
	}

	r := newRig(t, ClientLimits{Tokens: chars, MaxTokens: 20000})
	out = onlyText(t, r.call(t, "t", twoBlocks(12000, true)))
	if n, m := parseMarker(t, out); m != 24000 || n != letters(out) {
		t.Errorf("client, images: marker %d of %d", n, m)
	}
	errRes := twoBlocks(6000, false)
	errRes.IsError = true
	out = onlyText(t, r.call(t, "t", errRes))
	if n, m := parseMarker(t, out); m != 12000 || n != 10000 || !strings.Contains(out, "the middle 2000 characters") {
		t.Errorf("client, error trimmed: marker %d of %d in %q", n, m, clip(out))
	}
}
