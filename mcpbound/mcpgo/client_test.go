package mcpgo

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpcore"
)

var savedRE = regexp.MustCompile(`saved to the file (\S+) \(`)

// TestClientTransportCeilings: through the wrapped transport, an mcp-go
// client that calls tools as before gets a result of exactly MaxChars
// whole, one of MaxChars+1 saved byte-exact to a file the note names, an
// error of 20,000 characters trimmed to its ends, and a tool that declares
// _meta["anthropic/maxResultSizeChars"] gets its own ceiling once the tools
// were listed. Sabotage: a transport that passes tools/call results
// through unchanged fails the spill check; one that ignores tools/list
// saves the declared tool's result.
func TestClientTransportCeilings(t *testing.T) {
	const max = 1000
	texts := map[string]string{"below": mixed(max - 1), "at": mixed(max), "above": mixed(max + 1), "huge": mixed(1 << 20)}
	s := newServer(texts)
	s.AddTool(mcp.NewTool("failing"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError(strings.Repeat("e", 20000)), nil
	})
	own := mcp.NewTool("own")
	own.Meta = &mcp.Meta{AdditionalFields: map[string]any{mcpcore.MaxResultSizeCharsKey: 3000}}
	s.AddTool(own, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(mixed(2500)), nil
	})
	dir := testenc.PrivateDir(t)
	c := connect(t, serve(t, s), ClientLimits{MaxChars: max, SpillDir: dir}.Transport)
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"below", "at", "above", "huge", "own"} {
		text, _ := textOf(call(t, c, name))
		want := texts[name]
		if name == "own" {
			want = mixed(2500)
		}
		if chars(want) <= max || name == "own" {
			if text != want {
				t.Errorf("%s: a result within its ceiling was changed: %q", name, clip(text))
			}
			continue
		}
		m := savedRE.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s: %d characters over %d were not saved: %q", name, chars(want), max, clip(text))
			continue
		}
		if b, err := os.ReadFile(m[1]); err != nil || string(b) != want {
			t.Errorf("%s: the file %s does not hold the result byte-exact (%d bytes, %v)", name, m[1], len(b), err)
		}
	}
	r := call(t, c, "failing")
	text, _ := textOf(r)
	if n, m := parseMarker(t, text); !r.IsError || m != 20000 || n != 10000 || chars(text) > mcpcore.DefaultMaxErrorChars {
		t.Errorf("error result: isError %v, marker %d of %d, %d characters", r.IsError, n, m, chars(text))
	}
}

// TestClientTransportKeepsOptionalInterfaces: the wrapper offers exactly
// the optional interfaces its base offers, so that the client treats it as
// it would the base. Sabotage: returning the plain wrapper for an HTTP base
// loses HTTPConnection.
func TestClientTransportKeepsOptionalInterfaces(t *testing.T) {
	tr, err := transport.NewStreamableHTTP("http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	w := ClientLimits{}.Transport(tr)
	if _, ok := w.(transport.HTTPConnection); !ok {
		t.Error("the wrapper of a streamable HTTP transport is not an HTTPConnection")
	}
	if _, ok := w.(transport.BidirectionalInterface); !ok {
		t.Error("the wrapper of a streamable HTTP transport takes no server requests")
	}
	in := transport.NewInProcessTransport(server.NewMCPServer("x", "1"))
	if _, ok := (ClientLimits{}).Transport(in).(transport.HTTPConnection); ok {
		t.Error("the wrapper of an in-process transport claims to be HTTP")
	}
}
