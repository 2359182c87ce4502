package mcpbound

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/internal/mcptest"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// mixed returns a text of n characters of one- to four-byte UTF-8.
var mixed = testenc.MixedText

// parseMarker returns N and M of the first marker in s.
var parseMarker = testenc.ParseMarker

// clip shortens s for a failure message.
var clip = testenc.Clip

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

// chars counts characters (code points) as the core does.
func chars(s string) int { return utf8.RuneCountInString(s) }

// head returns the first n characters of s (valid UTF-8).
func head(s string, n int) string {
	r := []rune(s)
	return string(r[:min(max(n, 0), len(r))])
}

// tail returns the last n characters of s (valid UTF-8).
func tail(s string, n int) string {
	r := []rune(s)
	return string(r[len(r)-min(max(n, 0), len(r)):])
}

// noteRoom returns the characters a page's navigation note may take for a
// result of total characters.
func noteRoom(total int) int {
	return DefaultMaxResultChars - mcpcore.ServerLimits{}.PageChars(total)
}

// Stores the adapters' tests share.
type (
	countingStore = mcptest.CountingStore
	expiringStore = mcptest.ExpiringStore
)

// The names the core gives the files of saved results.
const (
	spillPrefix = "mcp-result-"
	spillSuffix = ".txt"
)

// connectTo connects a client of the official SDK to srv over in-memory
// transports, both closed when the test ends.
func connectTo(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
