package mcpgo

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ServerLimits caps what an mcp-go server's tools return, in one place for
// all tools. Its fields (MaxResultChars, TailChars, Store) and what it does
// with a result (the marker "[truncated: showing N of M characters", the
// rule for structured content, the links and pages of a Store) are those
// of [mcpcore.ServerLimits], which mcpbound.ServerLimits shares for the
// official Go SDK.
//
// ServerLimits is a value; what it returns is safe for concurrent use.
type ServerLimits struct {
	// MaxResultChars is the most characters (code points) of text a
	// tools/call result may carry, marker included, and of a kept result's
	// page. Zero means 20,000; below mcpcore.MinResultChars is an error.
	MaxResultChars int
	// TailChars, if positive, keeps the last TailChars characters of a cut
	// after the marker. Zero keeps the head alone.
	TailChars int
	// Store, if not nil, keeps results over the cap for reading by link
	// (mcpcore.NewStore in memory, redisstore for a fleet).
	Store mcpcore.ResultStore
}

// Validate reports whether the limits are usable, and why not.
func (l ServerLimits) Validate() error { return mcpcore.ServerLimits(l).Validate() }

// core returns the checked core of l; it panics if Validate reports an
// error: a configuration error is the program's, found at start-up.
func (l ServerLimits) core() *mcpcore.Server {
	s, err := mcpcore.NewServer(mcpcore.ServerLimits(l))
	if err != nil {
		panic(err)
	}
	return s
}

// Option returns the server option that wires the limits into an
// MCPServer: the tool handler middleware ([ServerLimits.Middleware]; tools
// added with AddTaskTool need [ServerLimits.TaskTool], which the option
// cannot reach) and,
// with a Store, the resource template through which resources/read serves
// the pages of kept results ([ServerLimits.Resources]). Give it to
// server.NewMCPServer before any other tool middleware, so that it is the
// outermost and caps what they return too. It panics if
// [ServerLimits.Validate] reports an error; call Validate first to handle
// it otherwise.
func (l ServerLimits) Option() server.ServerOption {
	s := l.core()
	return func(srv *server.MCPServer) {
		srv.Use(middleware(s))
		if s.Keeps() {
			srv.AddResourceTemplates(resources(s))
		}
	}
}

// Middleware returns the tool handler middleware that applies the limits
// to every tool result, a handler's error included (it becomes an isError
// result with the error's text, capped like any), for
// server.WithToolHandlerMiddleware or
// MCPServer.Use. With a Store, the server must also serve the links it
// mints: use [ServerLimits.Option], or add [ServerLimits.Resources]. It
// panics if [ServerLimits.Validate] reports an error.
func (l ServerLimits) Middleware() server.ToolHandlerMiddleware { return middleware(l.core()) }

// middleware caps every result the handler returns, and turns a handler's
// error into an isError result it caps.
func middleware(s *mcpcore.Server) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r, err := next(ctx, req)
			if err != nil {
				// A handler's failure reaches the model as an isError
				// result, capped like any (the form the MCP specification
				// prefers); mcp-go would answer its whole text as a
				// JSON-RPC error.
				r = mcp.NewToolResultError(err.Error())
			}
			if r == nil {
				return r, nil
			}
			return rewrite(r, s.Cap(ctx, coreResult(r))), nil
		}
	}
}

// TaskTool returns h with the limits applied to what it leaves for
// tasks/result: its result capped as a tools/call result is, and its
// failure (an error other than its context's end) turned into an isError
// result, capped. Wrap every handler given to MCPServer.AddTaskTool with
// it: mcp-go runs task tools without tool middleware and has no hook that
// can change what tasks/result returns, so [ServerLimits.Option] cannot
// reach them (a regular tool called as a task, TaskSupportOptional, gets
// the middleware as any call does). It panics if [ServerLimits.Validate]
// reports an error.
func (l ServerLimits) TaskTool(h server.TaskToolHandlerFunc) server.TaskToolHandlerFunc {
	s := l.core()
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		r, err := h(ctx, req)
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return r, err // mcp-go marks the task cancelled
			}
			r = &mcp.CreateTaskResult{Content: []mcp.Content{mcp.NewTextContent(err.Error())}, IsError: true}
		}
		if r == nil {
			return r, nil
		}
		c := &mcp.CallToolResult{Content: r.Content, StructuredContent: r.StructuredContent, IsError: r.IsError}
		c = rewrite(c, s.Cap(ctx, coreResult(c)))
		out := *r
		out.Content, out.StructuredContent, out.IsError = c.Content, c.StructuredContent, c.IsError
		return &out, nil
	}
}
