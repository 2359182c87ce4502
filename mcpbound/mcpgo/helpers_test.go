package mcpgo

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/internal/mcptest"
	"github.com/boundhttp/boundhttp/internal/testenc"
)

var (
	mixed       = testenc.MixedText
	parseMarker = testenc.ParseMarker
	clip        = testenc.Clip
)

// chars counts characters (code points) as the core does.
func chars(s string) int { return utf8.RuneCountInString(s) }

// listOut is the output of the typed tools of these tests.
type listOut struct {
	Items []string `json:"items"`
}

// items returns n items of 100 characters.
func items(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat(string(rune('a'+i%26)), 100)
	}
	return out
}

// newServer returns an mcp-go server with opts whose tools are: "small"
// and "large", typed (with an output schema) returning 5 and 100 items of
// 100 characters as structured content with its JSON as text; "text",
// mixed(9000); and, for each name in texts, a tool returning that text.
func newServer(texts map[string]string, opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("mcpgo-test", "1.0.0", opts...)
	for name, n := range map[string]int{"small": 5, "large": 100} {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("lists items"), mcp.WithOutputSchema[listOut]()),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultJSON(listOut{Items: items(n)})
			})
	}
	texts["text"] = mixed(9000)
	for name, text := range texts {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(text), nil
		})
	}
	return s
}

// serve serves s over streamable HTTP on loopback and returns its URL.
func serve(t *testing.T, s *server.MCPServer) string {
	t.Helper()
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL
}

// connect returns an initialized mcp-go client of the server at url, its
// transport wrapped by wrap unless nil.
func connect(t *testing.T, url string, wrap func(transport.Interface) transport.Interface) *client.Client {
	t.Helper()
	return connectVersion(t, url, wrap, mcp.LATEST_PROTOCOL_VERSION)
}

// connectVersion is connect with the protocol version version.
func connectVersion(t *testing.T, url string, wrap func(transport.Interface) transport.Interface, version string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	var base transport.Interface = tr
	if wrap != nil {
		base = wrap(tr)
	}
	c := client.NewClient(base)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "mcpgo-test-client", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c
}

// call calls tool and returns its result.
func call(t *testing.T, c *client.Client, tool string) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	return res
}

// textOf returns the text blocks of r joined by "\n", and its link's URI.
func textOf(r *mcp.CallToolResult) (text, link string) {
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			parts = append(parts, c.Text)
		case mcp.ResourceLink:
			link = c.URI
		}
	}
	return strings.Join(parts, "\n"), link
}

// expiring is the store whose results read as expired once told.
type expiring = mcptest.ExpiringStore
