package mcpbound

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/internal/testenc"
)

// The official TypeScript SDK's client, run by node against a go-sdk server
// on loopback: what it hands its caller is what the server meant.

// tsOutcome is what the TS client printed for one tool.
type tsOutcome = testenc.TSOutcome

// runTSClient serves server over streamable HTTP on loopback and runs the
// TS client against it for tools.
func runTSClient(t *testing.T, server *mcp.Server, tools ...string) map[string]tsOutcome {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer srv.Close()
	return testenc.RunTSClient(t, srv.URL, tools...)
}

// listOut is the output of the typed tools of these tests.
type listOut struct {
	Items []string `json:"items"`
}

// typedServer returns a server whose typed tools (mcp.AddTool, so each has
// an outputSchema) return n items of 100 characters: "small" 5, "large"
// 100 (10,000 characters), capped by limits.
func typedServer(limits ServerLimits) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "v1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	s.AddReceivingMiddleware(limits.Middleware())
	for name, n := range map[string]int{"small": 5, "large": 100} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: "lists items"},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, listOut, error) {
				return nil, listOut{Items: items(n)}, nil
			})
	}
	s.AddTool(&mcp.Tool{Name: "text", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(mixed(9000)), nil
		})
	return s
}

// items returns n items of 100 characters.
func items(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat(string(rune('a'+i%26)), 100)
	}
	return out
}

// TestTSClientTypedToolCut: a typed tool's result over the cap reaches the
// official TS client's caller, cut or linked, with the marker, the link
// and isError set (the tool's structured content cannot be sent in part,
// and the client throws McpError -32600 on a successful result without
// it); a result under the cap keeps its structured content, which the
// client validates. Sabotage: keeping isError false on a cut typed result
// makes callTool throw "has an output schema but did not return structured
// content" for both.
func TestTSClientTypedToolCut(t *testing.T) {
	for _, store := range []bool{false, true} {
		limits := ServerLimits{MaxResultChars: 2000}
		if store {
			limits.Store = NewStore(0, 0)
		}
		out := runTSClient(t, typedServer(limits), "small", "large")
		if o := out["small"]; o.Error != "" || o.Result.IsError || !strings.Contains(string(o.Result.StructuredContent), `"items"`) {
			t.Errorf("store %v: small typed result: %+v", store, o)
		}
		o := out["large"]
		if o.Error != "" {
			t.Fatalf("store %v: the TS client threw on a cut typed result: %s", store, o.Error)
		}
		text := o.Text()
		n, m := parseMarker(t, text)
		full, _ := json.Marshal(listOut{Items: items(100)})
		if !o.Result.IsError || o.Result.StructuredContent != nil || m != chars(string(full)) || chars(text) > 2000 ||
			!strings.HasPrefix(string(full), text[:strings.Index(text, "\n[truncated")]) || !strings.Contains(text, "the tool succeeded") {
			t.Errorf("store %v: cut typed result as the TS client got it: isError %v, marker %d of %d, %q",
				store, o.Result.IsError, n, m, clip(text))
		}
		if store && (o.Link() == "" || !strings.Contains(text, o.Link()) || o.Data != string(full)) {
			t.Errorf("store %v: link %q; read back %d bytes, want the %d of the full result", store, o.Link(), len(o.Data), len(full))
		}
		t.Logf("store %v: the TS client's callTool returned isError %v, structuredContent %s, text %q, link %q",
			store, o.Result.IsError, o.Result.StructuredContent, clip(text), o.Link())
		if !store && o.Link() != "" {
			t.Errorf("a link without a store")
		}
	}
}

// TestTSClientFollowsPagesInText: the TS client, following only URIs it
// finds in content text (what a model reads), goes from the preview through
// every page to the last; each page but the last names the next in its
// text; the data join byte-exact. Sabotage: a note without the next URI
// stops the client after the first page.
func TestTSClientFollowsPagesInText(t *testing.T) {
	out := runTSClient(t, typedServer(ServerLimits{MaxResultChars: MinResultChars, Store: NewStore(0, 0)}), "text")
	o := out["text"]
	if o.Error != "" || o.Result.IsError {
		t.Fatalf("text tool: %+v", o)
	}
	want := mixed(9000)
	per := MinResultChars - noteRoom(9000)
	pages := (9000 + per - 1) / per
	if !strings.Contains(o.Text(), itoa(pages)+" pages") {
		t.Errorf("the preview does not say how many pages (%d): %q", pages, o.Text())
	}
	if len(o.Pages) != pages || o.Data != want {
		t.Fatalf("the client read %d pages (want %d), %d of %d characters, exact %v", len(o.Pages), pages, chars(o.Data), 9000, o.Data == want)
	}
	for i, p := range o.Pages {
		if len(p) != 2 || chars(p[0])+chars(p[1]) > MinResultChars {
			t.Errorf("page %d: %d items, %d characters", i+1, len(p), chars(strings.Join(p, "")))
			continue
		}
		if i+1 < pages && !strings.Contains(p[1], "?page="+itoa(i+2)) {
			t.Errorf("page %d's note does not name the next: %q", i+1, p[1])
		}
	}
	t.Logf("the preview as the TS client got it: %q", o.Text())
	t.Logf("page 1's note: %q; the last page's note: %q", o.Pages[0][1], o.Pages[pages-1][1])
}
