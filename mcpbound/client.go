package mcpbound

import (
	"context"
	"errors"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ClientLimits applies to tool results, as a sending middleware of the
// official Go SDK's client, the ceilings real MCP clients apply:
//
//	cl.AddSendingMiddleware(mcpbound.ClientLimits{SpillDir: dir}.Middleware())
//
// Its fields and what it does (a warning above WarnTokens; a result over
// MaxTokens or the tool's character ceiling saved to a file under SpillDir
// and named; results with images only held to MaxTokens; long errors
// trimmed to their ends) are those of [mcpcore.ClientLimits], which the
// adapter for mark3labs/mcp-go shares. The middleware learns tools' own
// ceilings (_meta["anthropic/maxResultSizeChars"]) from the tools/list
// results it sees, per session. It is safe for concurrent use.
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

// Middleware returns the sending middleware that applies the limits to
// tools/call results and learns tools' overrides from tools/list results.
// It panics if [ClientLimits.Validate] reports an error: a configuration
// error is the program's, found at start-up; call Validate first to handle
// it otherwise. SpillDir is made an absolute path when Middleware is
// called.
func (l ClientLimits) Middleware() mcp.Middleware {
	c, err := mcpcore.NewClient(mcpcore.ClientLimits(l))
	if err != nil {
		panic(err)
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				return res, trimmed(c, err)
			}
			switch r := res.(type) {
			case *mcp.ListToolsResult:
				if method == "tools/list" && r != nil {
					learn(c, req, r)
				}
			case *mcp.CallToolResult:
				if method == "tools/call" && r != nil {
					name := ""
					if p, ok := req.GetParams().(*mcp.CallToolParams); ok && p != nil {
						name = p.Name
					}
					return rewrite(r, c.Apply(req.GetSession(), name, coreResult(r))), nil
				}
			}
			return res, err
		}
	}
}

// learn hands the core the ceilings tools declare in a tools/list page.
func learn(c *mcpcore.Client, req mcp.Request, r *mcp.ListToolsResult) {
	firstPage := true
	if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil && p.Cursor != "" {
		firstPage = false
	}
	tools := make([]mcpcore.ToolCeiling, 0, len(r.Tools))
	for _, t := range r.Tools {
		if t != nil {
			tools = append(tools, mcpcore.ToolCeiling{Name: t.Name, MaxResultSizeChars: t.Meta[MaxResultSizeCharsKey]})
		}
	}
	c.Learn(req.GetSession(), firstPage, tools)
}

// trimmed returns err with the message of a server's JSON-RPC error
// trimmed as an error result is (MaxErrorChars, its two ends kept), and its
// data dropped when longer than that: the server's words, on their way to a
// model. Other errors (the transport's, the context's) pass unchanged.
func trimmed(c *mcpcore.Client, err error) error {
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) {
		return err
	}
	out := *werr
	out.Message = c.TrimError(werr.Message)
	if len(out.Data) > c.MaxErrorChars {
		out.Data = nil
	}
	if out.Message == werr.Message && len(out.Data) == len(werr.Data) {
		return err
	}
	return &out
}
