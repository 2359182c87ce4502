package mcpgo

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ClientLimits applies to tool results the ceilings real MCP clients apply,
// for an mcp-go client, through its transport:
//
//	c := client.NewClient(mcpgo.ClientLimits{SpillDir: dir}.Transport(tr))
//
// Its fields and what it does (a warning above WarnTokens; a result over
// MaxTokens or the tool's character ceiling saved to a file under SpillDir
// and named; results with images only held to MaxTokens; long errors
// trimmed to their ends) are those of [mcpcore.ClientLimits], which
// mcpbound.ClientLimits shares for the official Go SDK. The transport
// learns tools' own ceilings (_meta["anthropic/maxResultSizeChars"]) from
// the tools/list results that pass through it, so list tools before
// calling them for those to apply.
type ClientLimits struct {
	// WarnTokens: a successful result of more tokens is logged as a
	// warning. Zero means 10,000.
	WarnTokens int
	// MaxTokens: a successful result of more tokens is saved to a file (or
	// cut, when it has images). Zero means 25,000.
	MaxTokens int
	// MaxChars: a successful result of more characters is saved to a file.
	// Zero means 50,000.
	MaxChars int
	// HardMaxChars is the most a tool may raise its own ceiling to. Zero
	// means 500,000.
	HardMaxChars int
	// MaxErrorChars: an error result, or a server's JSON-RPC error message,
	// of more characters keeps its first and last 5,000. Zero means 11,000.
	MaxErrorChars int
	// MaxSpillBytes bounds the result files in SpillDir, per folder across
	// the process. Zero means 256 MiB.
	MaxSpillBytes int64
	// TailChars, if positive, keeps the last TailChars characters of a cut
	// after the marker.
	TailChars int
	// SpillDir is the private folder of saved results. Empty means
	// "mcpbound-results-<uid>" in os.TempDir().
	SpillDir string
	// Logger receives the warnings; nil means slog.Default().
	Logger *slog.Logger
	// Tokens counts a text's tokens; nil means one per four characters.
	Tokens func(string) int
}

// Validate reports whether the limits are usable, and why not.
func (l ClientLimits) Validate() error { return mcpcore.ClientLimits(l).Validate() }

// Transport returns base wrapped so that every tools/call result that
// comes back through it is held to the limits; the client calls tools as
// before. The wrapper offers what base offers of mcp-go's optional
// transport interfaces (requests from the server, the HTTP protocol
// version, the connection-lost handler, the legacy protocol), so the client
// behaves as it would on base. One wrapper is one session; base is not
// modified. Transport panics if [ClientLimits.Validate] reports an error: a
// configuration error is the program's, found at start-up.
func (l ClientLimits) Transport(base transport.Interface) transport.Interface {
	c, err := mcpcore.NewClient(mcpcore.ClientLimits(l))
	if err != nil {
		panic(err)
	}
	t := &limited{Interface: base, caps: c}
	bidi, isBidi := base.(transport.BidirectionalInterface)
	http, isHTTP := base.(transport.HTTPConnection)
	switch {
	case isBidi && isHTTP:
		return &limitedBidiHTTP{limitedBidi{t, bidi}, http}
	case isBidi:
		return &limitedBidi{t, bidi}
	case isHTTP:
		return &limitedHTTP{t, http}
	}
	return t
}

// limited is the wrapper: every method but SendRequest is base's.
type limited struct {
	transport.Interface
	caps *mcpcore.Client
}

// SendRequest sends req through base, learns from a tools/list result and
// holds a tools/call result to the limits. A response that is an error,
// or a result that does not parse, passes unchanged.
func (t *limited) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.Interface.SendRequest(ctx, req)
	if err == nil && resp != nil && resp.Error != nil {
		return t.trimmed(resp), nil
	}
	if err != nil || resp == nil || len(resp.Result) == 0 {
		return resp, err
	}
	switch req.Method {
	case string(mcp.MethodToolsList):
		var r mcp.ListToolsResult
		if json.Unmarshal(resp.Result, &r) == nil {
			t.learn(req, &r)
		}
	case string(mcp.MethodToolsCall), string(mcp.MethodTasksResult):
		// A task's result is a tool's result delivered later: the same
		// members (content, structuredContent, isError), the same ceilings;
		// it names no tool, so a tool's own ceiling does not apply to it.
		raw := resp.Result
		r, err := mcp.ParseCallToolResult(&raw)
		if err != nil {
			return resp, nil
		}
		name := ""
		if req.Method == string(mcp.MethodToolsCall) {
			name = params(req).Name
		}
		rep := t.caps.Apply(t, name, coreResult(r))
		if rep == nil {
			return resp, nil
		}
		b, err := json.Marshal(rewrite(r, rep))
		if err != nil {
			return resp, nil
		}
		out := *resp
		out.Result = b
		return &out, nil
	}
	return resp, nil
}

// learn hands the core the ceilings tools declare in a tools/list page.
func (t *limited) learn(req transport.JSONRPCRequest, r *mcp.ListToolsResult) {
	tools := make([]mcpcore.ToolCeiling, 0, len(r.Tools))
	for _, tool := range r.Tools {
		var v any
		if tool.Meta != nil {
			v = tool.Meta.AdditionalFields[mcpcore.MaxResultSizeCharsKey]
		}
		tools = append(tools, mcpcore.ToolCeiling{Name: tool.Name, MaxResultSizeChars: v})
	}
	t.caps.Learn(t, params(req).Cursor == "", tools)
}

// params returns the name and cursor of a request's params, whatever Go
// value the client put there.
func params(req transport.JSONRPCRequest) (p struct {
	Name   string `json:"name"`
	Cursor string `json:"cursor"`
}) {
	if b, err := json.Marshal(req.Params); err == nil {
		json.Unmarshal(b, &p)
	}
	return p
}

// SetConnectionLostHandler passes handler to base if base takes one, as
// the client does.
func (t *limited) SetConnectionLostHandler(handler func(error)) {
	if s, ok := t.Interface.(interface{ SetConnectionLostHandler(func(error)) }); ok {
		s.SetConnectionLostHandler(handler)
	}
}

// RequiresLegacyProtocol reports what base reports, false if it does not
// say.
func (t *limited) RequiresLegacyProtocol() bool {
	l, ok := t.Interface.(interface{ RequiresLegacyProtocol() bool })
	return ok && l.RequiresLegacyProtocol()
}

// limitedBidi is the wrapper of a base that takes requests from the server.
type limitedBidi struct {
	*limited
	bidi transport.BidirectionalInterface
}

func (t *limitedBidi) SetRequestHandler(h transport.RequestHandler) { t.bidi.SetRequestHandler(h) }

// limitedHTTP is the wrapper of an HTTP base.
type limitedHTTP struct {
	*limited
	http transport.HTTPConnection
}

func (t *limitedHTTP) SetProtocolVersion(v string) { t.http.SetProtocolVersion(v) }

// limitedBidiHTTP is the wrapper of an HTTP base that takes requests.
type limitedBidiHTTP struct {
	limitedBidi
	http transport.HTTPConnection
}

func (t *limitedBidiHTTP) SetProtocolVersion(v string) { t.http.SetProtocolVersion(v) }

// trimmed returns resp, a server's JSON-RPC error, with its message
// trimmed as an error result is (MaxErrorChars, its two ends kept) and its
// data dropped when it serialises longer than that: the server's words, on
// their way to a model.
func (t *limited) trimmed(resp *transport.JSONRPCResponse) *transport.JSONRPCResponse {
	e := *resp.Error
	e.Message = t.caps.TrimError(e.Message)
	if e.Data != nil {
		if b, err := json.Marshal(e.Data); err != nil || len(b) > t.caps.MaxErrorChars {
			e.Data = nil
		}
	}
	out := *resp
	out.Error = &e
	return &out
}
