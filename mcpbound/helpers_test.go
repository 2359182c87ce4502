package mcpbound

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/internal/testenc"
)

// mixed returns a text of n characters of one- to four-byte UTF-8.
var mixed = testenc.MixedText

var markerRE = regexp.MustCompile(`\[truncated: showing (\d+) of (\d+) characters`)

// parseMarker returns N and M of the first marker in s.
func parseMarker(t *testing.T, s string) (n, m int) {
	t.Helper()
	sm := markerRE.FindStringSubmatch(s)
	if sm == nil {
		t.Fatalf("no marker in %q", clip(s))
	}
	n, _ = strconv.Atoi(sm[1])
	m, _ = strconv.Atoi(sm[2])
	return n, m
}

// clip shortens s for a failure message.
func clip(s string) string {
	if len(s) > 300 {
		return s[:150] + "..." + s[len(s)-150:]
	}
	return s
}

// textResult is a successful result of one text block.
func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// serverCall runs mw over a tools/call answered by res.
func serverCall(t *testing.T, mw mcp.Middleware, res *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	h := mw(func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil })
	out, err := h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*mcp.CallToolResult)
}

// onlyText returns the text of the result's single text block.
func onlyText(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	var texts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	if len(texts) != 1 {
		t.Fatalf("result has %d text blocks, want 1", len(texts))
	}
	return texts[0]
}

// privateDir returns a new folder private to the user.
var privateDir = testenc.PrivateDir
