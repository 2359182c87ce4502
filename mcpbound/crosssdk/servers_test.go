package crosssdk

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	mcpgomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpbound"
	"github.com/boundhttp/boundhttp/mcpbound/mcpgo"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// The two SDKs, as the tables name them.
const (
	goSDK = "go-sdk"
	mcpGo = "mcp-go"
)

// sdks lists both, the official Go SDK first.
var sdks = []string{goSDK, mcpGo}

// A tool is one tool that a server on either SDK offers, the same on both:
// its result is text (or, typed, a list as structured content with its
// JSON as the text), optionally an error or followed by an image.
type tool struct {
	name     string
	text     string // the text block of an untyped tool
	items    int    // a typed tool (an output schema): this many items of 100 characters
	isError  bool
	image    bool // an image block after the text
	ownChars int  // _meta["anthropic/maxResultSizeChars"] in its tools/list entry; 0 for none
	fails    bool // the handler fails the ordinary way: an error whose text is text
}

// listOut is the output of the typed tools.
type listOut struct {
	Items []string `json:"items"`
}

// list returns the output of a typed tool of n items of 100 characters.
func list(n int) listOut {
	out := listOut{Items: make([]string, n)}
	for i := range out.Items {
		out.Items[i] = strings.Repeat(string(rune('a'+i%26)), 100)
	}
	return out
}

// full returns the text of the tool's result as the caps measure it: the
// text, or a typed tool's JSON.
func (tl tool) full() string {
	if tl.items > 0 {
		b, _ := json.Marshal(list(tl.items))
		return string(b)
	}
	return tl.text
}

// png is the image block's data.
var png = []byte("\x89PNG\r\n\x1a\n")

// goSDKServer returns a server of the official Go SDK offering tools, with
// mws as its receiving middleware (mcpbound.ServerLimits, or none).
func goSDKServer(tools []tool, mws ...gosdk.Middleware) *gosdk.Server {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "go-sdk-server", Version: "1.0.0"},
		&gosdk.ServerOptions{Capabilities: &gosdk.ServerCapabilities{Resources: &gosdk.ResourceCapabilities{}}})
	s.AddReceivingMiddleware(mws...)
	for _, tl := range tools {
		var meta gosdk.Meta
		if tl.ownChars > 0 {
			meta = gosdk.Meta{mcpcore.MaxResultSizeCharsKey: tl.ownChars}
		}
		if tl.items > 0 {
			gosdk.AddTool(s, &gosdk.Tool{Name: tl.name, Description: "lists items", Meta: meta},
				func(context.Context, *gosdk.CallToolRequest, struct{}) (*gosdk.CallToolResult, listOut, error) {
					return nil, list(tl.items), nil
				})
			continue
		}
		s.AddTool(&gosdk.Tool{Name: tl.name, InputSchema: json.RawMessage(`{"type":"object"}`), Meta: meta},
			func(context.Context, *gosdk.CallToolRequest) (*gosdk.CallToolResult, error) {
				if tl.fails {
					return nil, errors.New(tl.text)
				}
				r := &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: tl.text}}, IsError: tl.isError}
				if tl.image {
					r.Content = append(r.Content, &gosdk.ImageContent{Data: png, MIMEType: "image/png"})
				}
				return r, nil
			})
	}
	return s
}

// mcpGoServer returns an mcp-go server offering tools, with opts
// (mcpgo.ServerLimits' Option, or none).
func mcpGoServer(tools []tool, opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("mcp-go-server", "1.0.0", opts...)
	for _, tl := range tools {
		var def mcpgomcp.Tool
		if tl.items > 0 {
			def = mcpgomcp.NewTool(tl.name, mcpgomcp.WithDescription("lists items"), mcpgomcp.WithOutputSchema[listOut]())
		} else {
			def = mcpgomcp.NewTool(tl.name)
		}
		if tl.ownChars > 0 {
			def.Meta = &mcpgomcp.Meta{AdditionalFields: map[string]any{mcpcore.MaxResultSizeCharsKey: tl.ownChars}}
		}
		s.AddTool(def, func(context.Context, mcpgomcp.CallToolRequest) (*mcpgomcp.CallToolResult, error) {
			if tl.fails {
				return nil, errors.New(tl.text)
			}
			if tl.items > 0 {
				return mcpgomcp.NewToolResultJSON(list(tl.items))
			}
			r := mcpgomcp.NewToolResultText(tl.text)
			r.IsError = tl.isError
			if tl.image {
				r.Content = append(r.Content, mcpgomcp.NewImageContent(base64.StdEncoding.EncodeToString(png), "image/png"))
			}
			return r, nil
		})
	}
	return s
}

// serveGoSDK serves s over streamable HTTP on loopback and returns its URL.
func serveGoSDK(t *testing.T, s *gosdk.Server) string {
	t.Helper()
	srv := httptest.NewServer(gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// serveMCPGo serves s over streamable HTTP on loopback and returns its URL.
func serveMCPGo(t *testing.T, s *server.MCPServer) string {
	t.Helper()
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL
}

// serve starts a server on sdk offering tools, capped by l unless nil, and
// returns its URL.
func serve(t *testing.T, sdk string, l *mcpcore.ServerLimits, tools ...tool) string {
	t.Helper()
	if sdk == goSDK {
		var mws []gosdk.Middleware
		if l != nil {
			mws = append(mws, mcpbound.ServerLimits(*l).Middleware())
		}
		return serveGoSDK(t, goSDKServer(tools, mws...))
	}
	var opts []server.ServerOption
	if l != nil {
		opts = append(opts, mcpgo.ServerLimits(*l).Option())
	}
	return serveMCPGo(t, mcpGoServer(tools, opts...))
}

// Helpers shared with the other packages' tests.
var (
	mixed       = testenc.MixedText
	parseMarker = testenc.ParseMarker
	clip        = testenc.Clip
	privateDir  = testenc.PrivateDir
)
