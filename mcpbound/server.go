package mcpbound

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxResultChars is the cap of [ServerLimits] when MaxResultChars is
// zero.
const DefaultMaxResultChars = 20000

// MinResultChars is the smallest cap [ServerLimits] accepts: a smaller one
// leaves no room for the marker that says what was cut.
const MinResultChars = 256

// ServerLimits caps what an MCP server's tools return, in one place for all
// tools: a receiving middleware of the official Go SDK's server.
//
//	srv.AddReceivingMiddleware(mcpbound.ServerLimits{MaxResultChars: 20000}.Middleware())
//
// What is measured is the text of a tools/call result: its text blocks and
// embedded text resources joined by "\n", plus the JSON serialization of its
// structuredContent when no text block already equals it (the structured
// result and its text copy are counted once). Images, audio, resource links
// and embedded binary resources are not text: they pass unchanged, bounded by
// the HTTP budget alone.
//
// A result over the cap (error results too) is replaced by one text block
// that holds the beginning of the text, a newline and a marker beginning
// "[truncated: showing N of M characters", N and M plain decimal integers,
// followed by what the agent can do to get the rest; the whole block is at
// most MaxResultChars characters. structuredContent is then dropped: a cut
// JSON text is not valid JSON, and its text (cut) is in the block. A client
// that validates structured output against the tool's outputSchema will
// find none in a cut result, which is the honest answer.
//
// With a Store, a successful result over the cap is kept whole instead and
// the result carries a preview (the marker naming the link), and a
// resource_link whose URI the same middleware serves through resources/read
// (see [ServerLimits.Middleware]). A result the Store cannot hold (bigger
// than the whole Store) is cut as above. Error results are never kept. A
// kept result's pages have the size of the cap of the middleware that kept
// it, and only a middleware with the same Store serves them.
//
// ServerLimits is a value; its Middleware is safe for concurrent use.
type ServerLimits struct {
	// MaxResultChars is the most characters (Unicode code points, not
	// bytes) of text a tools/call result may carry, marker included; it is
	// also the size of a page of a kept result. Zero means
	// DefaultMaxResultChars (20,000); a value below MinResultChars,
	// negative included, is a configuration error.
	MaxResultChars int

	// Store, if not nil, keeps results over the cap for reading by link.
	Store *Store
}

// Validate reports whether the limits are usable, and why not.
func (l ServerLimits) Validate() error {
	if l.MaxResultChars != 0 && l.MaxResultChars < MinResultChars {
		return fmt.Errorf("mcpbound: ServerLimits.MaxResultChars %d: below the minimum of %d characters (zero means the default, %d)",
			l.MaxResultChars, MinResultChars, DefaultMaxResultChars)
	}
	return nil
}

func (l ServerLimits) max() int {
	if l.MaxResultChars == 0 {
		return DefaultMaxResultChars
	}
	return l.MaxResultChars
}

// Middleware returns the receiving middleware that applies the limits to
// every tools/call result and, when a Store is set, answers resources/read
// for the URIs it issued (scheme "mcpbound", see [ResultURIPrefix]) itself,
// so that no resource needs to be registered; other reads pass on to the
// server. A server with no resources of its own should still advertise the
// resources capability (mcp.ServerOptions.Capabilities), since clients may
// check it before reading. Middleware panics if [ServerLimits.Validate]
// reports an error: a configuration error is the program's, found at
// start-up; call Validate first to handle it otherwise.
func (l ServerLimits) Middleware() mcp.Middleware {
	if err := l.Validate(); err != nil {
		panic(err)
	}
	max := l.max()
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" && l.Store != nil {
				if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil && isResultURI(p.URI) {
					return l.Store.read(p.URI)
				}
			}
			res, err := next(ctx, method, req)
			if method != "tools/call" || err != nil {
				return res, err
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				return l.capResult(r, max), nil
			}
			return res, err
		}
	}
}

// capResult returns r if its text fits max characters, else its cut or
// linked form.
func (l ServerLimits) capResult(r *mcp.CallToolResult, max int) *mcp.CallToolResult {
	t := textOf(r)
	total := chars(t.text)
	if total <= max {
		return r
	}
	if r.IsError {
		return withText(r, t, &mcp.TextContent{Text: cutToFit(t.text, total, max,
			"the rest of this error message was cut by the server's result limit")})
	}
	if l.Store != nil {
		mime := "text/plain; charset=utf-8"
		if t.onlyJSON {
			mime = "application/json"
		}
		if id, ok := l.Store.put(t.text, mime, max); ok {
			uri := ResultURIPrefix + id
			size := int64(len(t.text))
			how := fmt.Sprintf("the full result is the resource %s (%d characters, %d bytes); read it with resources/read, "+
				"in pages of at most %d characters, each page but the last naming the next one in _meta.next; it expires in %v",
				uri, total, size, max, l.Store.TTL())
			if 1+chars(marker(total, total, how)) > max {
				// At a small cap the long explanation leaves no room:
				// name the link and the way to follow it, no more.
				how = "the full result is the resource " + uri + "; read it with resources/read, following _meta.next"
			}
			return withText(r, t,
				&mcp.TextContent{Text: cutToFit(t.text, total, max, how)},
				&mcp.ResourceLink{URI: uri, Name: "result-" + id[:8], MIMEType: mime, Size: &size,
					Description: fmt.Sprintf("full tool result, %d characters", total)})
		}
		return withText(r, t, &mcp.TextContent{Text: cutToFit(t.text, total, max,
			"the full result was too large to keep; call the tool again asking for less (a narrower query, a smaller limit, or one page at a time)")})
	}
	return withText(r, t, &mcp.TextContent{Text: cutToFit(t.text, total, max,
		"the rest was not kept; call the tool again asking for less (a narrower query, a smaller limit, or one page at a time)")})
}
