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
	// Reads, if set, caps the text of resources/read and prompts/get
	// answers of the server's own resources and prompts too.
	Reads bool
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

// Resource returns h with the cap applied to the text of its answers (see
// mcpcore.ServerLimits.Reads; applied whether or not Reads is set, since
// wrapping is the opt-in): mcp-go has no middleware for resources/read.
// It panics if [ServerLimits.Validate] reports an error.
func (l ServerLimits) Resource(h server.ResourceHandlerFunc) server.ResourceHandlerFunc {
	s := l.core()
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		contents, err := h(ctx, req)
		if err != nil {
			return contents, err
		}
		var parts []string
		for _, c := range contents {
			if t, ok := resourceText(c); ok {
				parts = append(parts, t.Text)
			}
		}
		text, cut := s.CapRead(parts, "resource")
		if !cut {
			return contents, nil
		}
		out := make([]mcp.ResourceContents, 0, len(contents))
		first := true
		for _, c := range contents {
			t, ok := resourceText(c)
			switch {
			case !ok:
				out = append(out, c)
			case first:
				first = false
				out = append(out, mcp.TextResourceContents{URI: t.URI, MIMEType: "text/plain", Text: text})
			}
		}
		return out, nil
	}
}

// resourceText returns a resource content's text form, if it is text.
func resourceText(c mcp.ResourceContents) (mcp.TextResourceContents, bool) {
	switch c := c.(type) {
	case mcp.TextResourceContents:
		return c, true
	case *mcp.TextResourceContents:
		if c != nil {
			return *c, true
		}
	}
	return mcp.TextResourceContents{}, false
}

// Prompt returns h with the cap applied to the text of its answers (see
// mcpcore.ServerLimits.Reads): mcp-go has no middleware for prompts/get.
// It panics if [ServerLimits.Validate] reports an error.
func (l ServerLimits) Prompt(h server.PromptHandlerFunc) server.PromptHandlerFunc {
	s := l.core()
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		r, err := h(ctx, req)
		if err != nil || r == nil {
			return r, err
		}
		var parts []string
		for _, m := range r.Messages {
			if t := content(m.Content); t.Kind == mcpcore.Text {
				parts = append(parts, t.Text)
			}
		}
		text, cut := s.CapRead(parts, "prompt")
		if !cut {
			return r, nil
		}
		out := *r
		out.Messages = nil
		first := true
		for _, m := range r.Messages {
			if content(m.Content).Kind != mcpcore.Text {
				out.Messages = append(out.Messages, m)
				continue
			}
			if first {
				first = false
				out.Messages = append(out.Messages, mcp.PromptMessage{Role: m.Role, Content: mcp.NewTextContent(text)})
			}
		}
		return &out, nil
	}
}
