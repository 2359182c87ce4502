package mcpbound

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// Middleware returns the receiving middleware that applies the limits to
// every tools/call result (a handler's failure included: an error that is
// not a *jsonrpc.Error becomes an isError result, capped like any) and to
// the message of every JSON-RPC error the server answers (an unknown tool,
// a handler's *jsonrpc.Error, on any method: cut to MaxResultChars, its
// data dropped when longer), and, when a Store is set, answers resources/read
// for the URIs it issued (scheme "mcpbound", see [ResultURIPrefix]) itself,
// so that no resource needs to be registered; other reads pass on to the
// server. Clients may check the resources capability before reading:
// [ServerLimits.Install] adds this middleware and the template that makes
// the server advertise it; wired by hand, declare it
// (mcp.ServerOptions.Capabilities). Middleware panics if [ServerLimits.Validate]
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
			if err != nil {
				return failed(ctx, s, method, err)
			}
			if method != "tools/call" {
				if s.CapsReads() {
					return capRead(s, res), nil
				}
				return res, err
			}
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				return rewrite(r, s.Cap(ctx, coreResult(r))), nil
			}
			return res, err
		}
	}
}

// failed is the answer to a request whose handler failed with err: for
// tools/call, a failure that is not a protocol error becomes an isError
// result, capped (the form the MCP specification prefers for a tool's
// failure); a protocol error keeps its code, its message cut to the cap.
func failed(ctx context.Context, s *mcpcore.Server, method string, err error) (mcp.Result, error) {
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		out := *werr
		out.Message = s.CapError(werr.Message)
		if len(out.Data) > len(out.Message) {
			out.Data = nil // the server's own, but no smaller than the message it explains
		}
		return nil, &out
	}
	if method == "tools/call" {
		r := &mcp.CallToolResult{}
		r.SetError(err)
		return rewrite(r, s.Cap(ctx, coreResult(r))), nil
	}
	return nil, cappedError{msg: s.CapError(err.Error()), err: err}
}

// cappedError is an error whose message was cut to the cap; errors.Is and
// As still see the error it cut.
type cappedError struct {
	msg string
	err error
}

func (e cappedError) Error() string { return e.msg }
func (e cappedError) Unwrap() error { return e.err }

// Install wires the limits into srv in one call: the receiving middleware
// ([ServerLimits.Middleware]) and, with a Store, the resource template of
// the result links (mcpbound://result/{id}, listed by
// resources/templates/list), whose registration also makes srv advertise
// the resources capability, so that a client that checks capabilities
// before it reads follows the links. Call it before serving, after adding
// any receiving middleware that should see what the limits return. It
// panics if [ServerLimits.Validate] reports an error.
func (l ServerLimits) Install(srv *mcp.Server) {
	srv.AddReceivingMiddleware(l.Middleware())
	if l.Store == nil {
		return
	}
	s, err := mcpcore.NewServer(mcpcore.ServerLimits(l))
	if err != nil {
		panic(err)
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: mcpcore.ResultURIPrefix + "{id}{?page}",
		Name:        "tool-result-pages",
		Description: "pages of tool results too large to send whole; read the links tool results give, each page names the next",
		MIMEType:    "text/plain",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return readResult(ctx, s, req.Params.URI)
	})
}

// capRead caps the text of a resources/read or prompts/get answer (see
// ServerLimits.Reads): the text items' parts joined and cut, in the first
// text item's place; the other text items go, binary ones stay.
func capRead(s *mcpcore.Server, res mcp.Result) mcp.Result {
	switch r := res.(type) {
	case *mcp.ReadResourceResult:
		if r == nil {
			return res
		}
		var parts []string
		for _, c := range r.Contents {
			if c != nil && c.Blob == nil {
				parts = append(parts, c.Text)
			}
		}
		text, cut := s.CapRead(parts, "resource")
		if !cut {
			return res
		}
		out := *r
		out.Contents = nil
		first := true
		for _, c := range r.Contents {
			switch {
			case c == nil:
			case c.Blob != nil:
				out.Contents = append(out.Contents, c)
			case first:
				first = false
				out.Contents = append(out.Contents, &mcp.ResourceContents{URI: c.URI, MIMEType: "text/plain", Text: text})
			}
		}
		return &out
	case *mcp.GetPromptResult:
		if r == nil {
			return res
		}
		var parts []string
		for _, m := range r.Messages {
			if t, ok := textOfMessage(m); ok {
				parts = append(parts, t)
			}
		}
		text, cut := s.CapRead(parts, "prompt")
		if !cut {
			return res
		}
		out := *r
		out.Messages = nil
		first := true
		for _, m := range r.Messages {
			if _, ok := textOfMessage(m); !ok {
				if m != nil {
					out.Messages = append(out.Messages, m)
				}
				continue
			}
			if first {
				first = false
				out.Messages = append(out.Messages, &mcp.PromptMessage{Role: m.Role, Content: &mcp.TextContent{Text: text}})
			}
		}
		return &out
	}
	return res
}

// textOfMessage returns a prompt message's text, if it is text.
func textOfMessage(m *mcp.PromptMessage) (string, bool) {
	if m == nil {
		return "", false
	}
	t, ok := m.Content.(*mcp.TextContent)
	if !ok || t == nil {
		return "", false
	}
	return t.Text, true
}
