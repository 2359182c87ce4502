package mcpbound

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ServerLimits caps what an MCP server's tools return, in one place for all
// tools: a receiving middleware of the official Go SDK's server.
//
//	srv.AddReceivingMiddleware(mcpbound.ServerLimits{MaxResultChars: 20000}.Middleware())
//
// Its fields (MaxResultChars, TailChars, Store) and what it does with a
// result (the marker "[truncated: showing N of M characters", the rule for
// structured content, the links and pages of a Store) are those of
// [mcpcore.ServerLimits], which the adapter for mark3labs/mcp-go shares.
//
// ServerLimits is a value; its Middleware is safe for concurrent use.
type ServerLimits mcpcore.ServerLimits

// Validate reports whether the limits are usable, and why not.
func (l ServerLimits) Validate() error { return mcpcore.ServerLimits(l).Validate() }

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
	s, err := mcpcore.NewServer(mcpcore.ServerLimits(l))
	if err != nil {
		panic(err)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" {
				if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil && s.Owns(p.URI) {
					return readResult(ctx, s, p.URI)
				}
			}
			res, err := next(ctx, method, req)
			if method != "tools/call" || err != nil {
				return res, err
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				return rewrite(r, s.Cap(ctx, coreResult(r))), nil
			}
			return res, err
		}
	}
}
