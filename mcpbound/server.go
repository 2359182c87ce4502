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
// embedded text resources, plus the JSON serialization of its
// structuredContent when no text block already equals it (the structured
// result and its text copy are counted once). The count is of the result's
// characters: two blocks of 12,000 characters are 24,000. Images, audio,
// resource links and embedded binary resources are not text: they pass
// unchanged, bounded by the HTTP budget alone.
//
// A result over the cap (error results too) is replaced by one text block
// that holds the beginning of the text (its parts joined by "\n"), a
// newline and a marker beginning "[truncated: showing N of M characters",
// N and M plain decimal integers (M the result's characters, N those
// shown), followed by what the agent can do to get the rest; with
// TailChars, the block ends with a newline and the text's last TailChars
// characters. The whole block is at most MaxResultChars characters.
//
// A cut result carries no structuredContent (a cut JSON text is not valid
// JSON, and its text, cut, is in the block). The official TypeScript and
// Python clients refuse a result without structuredContent from a tool
// that declares an outputSchema (every typed tool of mcp.AddTool) unless
// the result is an error, and the specification requires structured
// content that conforms to the schema, which a part of it does not. So a
// result that had structuredContent is sent cut or linked with isError set,
// and its marker says that the tool succeeded and only the size made it an
// error: the clients then hand the marker and the link to the caller
// instead of throwing them away. A result without structuredContent keeps
// its isError.
//
// With a Store, a successful result over the cap is kept whole instead and
// the result carries a preview (the marker naming the link and its number
// of pages), and a resource_link whose URI the same middleware serves
// through resources/read (see [ServerLimits.Middleware]). Each page's data
// and its navigation note (which names the next page's URI, where a model
// reads it; see [NavigationKey]) together have at most MaxResultChars
// characters. A result the Store cannot hold (bigger than it may keep, or
// a store that cannot be reached) is cut as above, and the marker says
// why. Error results are never kept. Any middleware with the same Store
// serves the pages.
//
// ServerLimits is a value; its Middleware is safe for concurrent use.
type ServerLimits struct {
	// MaxResultChars is the most characters (Unicode code points, not
	// bytes) of text a tools/call result may carry, marker included; it is
	// also the most a page of a kept result (data and note) has. Zero
	// means DefaultMaxResultChars (20,000); a value below MinResultChars,
	// negative included, is a configuration error.
	MaxResultChars int

	// TailChars, if positive, makes every cut keep the last TailChars
	// characters of the text after the marker ("first K ... [marker] ...
	// last L"), for tools whose output ends with what matters (logs, test
	// runs); the head gets the rest of the room. Zero keeps the head alone;
	// negative, or more than MaxResultChars - MinResultChars (the room of
	// the marker), is a configuration error. A kept result's preview is
	// cut the same way; its pages are not.
	TailChars int

	// Store, if not nil, keeps results over the cap for reading by link:
	// a [*Store] (in memory, see [NewStore]) or any [ResultStore], such as
	// one in Redis shared by a fleet.
	Store ResultStore
}

// Validate reports whether the limits are usable, and why not.
func (l ServerLimits) Validate() error {
	if l.MaxResultChars != 0 && l.MaxResultChars < MinResultChars {
		return fmt.Errorf("mcpbound: ServerLimits.MaxResultChars %d: below the minimum of %d characters (zero means the default, %d)",
			l.MaxResultChars, MinResultChars, DefaultMaxResultChars)
	}
	if l.TailChars < 0 || l.TailChars > l.max()-MinResultChars {
		return fmt.Errorf("mcpbound: ServerLimits.TailChars %d: outside 0 to %d (MaxResultChars less the room of the marker, %d)",
			l.TailChars, l.max()-MinResultChars, MinResultChars)
	}
	return nil
}

func (l ServerLimits) max() int {
	if l.MaxResultChars == 0 {
		return DefaultMaxResultChars
	}
	return l.MaxResultChars
}

// store returns the Store, nil for none (a nil *Store included).
func (l ServerLimits) store() ResultStore {
	if s, ok := l.Store.(*Store); ok && s == nil {
		return nil
	}
	return l.Store
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
	c := serverCaps{max: l.max(), tail: l.TailChars, store: l.store()}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" && c.store != nil {
				if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil && isResultURI(p.URI) {
					return readResult(ctx, c.store, p.URI)
				}
			}
			res, err := next(ctx, method, req)
			if method != "tools/call" || err != nil {
				return res, err
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				return c.capResult(ctx, r), nil
			}
			return res, err
		}
	}
}
