// Command mcp runs an MCP server (the official Go SDK's streamable HTTP
// handler) behind boundhttp.Middleware, and an MCP client whose http.Client
// uses boundhttp.Transport, on a loopback port, both charged to one
// limits.Budget. The tool's input schema is audited at start-up: its largest
// tools/call request must fit the budget with headroom, so the cap the tool
// promises is one the transport can carry. A tool call over the budget is
// answered with a JSON-RPC error that names the limit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/schema"
)

// budget is what one request or response body may cost, on both sides.
var budget = limits.Budget{MaxWireBytes: 256 << 10, MaxDecodedBytes: 256 << 10}

// countSchema is the input schema of the "count" tool: every list and
// string has a ceiling.
const countSchema = `{
	"type": "object",
	"additionalProperties": false,
	"required": ["text"],
	"properties": {
		"text": {"type": "string", "maxLength": 30000, "description": "the text to count"},
		"tags": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 32}}
	}
}`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcp:", err)
		os.Exit(1)
	}
}

// checkSchema audits the tool's schema against the budget.
func checkSchema() (schema.ToolReport, error) {
	r, err := schema.AuditTool("count", []byte(countSchema), schema.Options{})
	if err != nil {
		return r, err
	}
	return r, r.Check(budget, schema.DefaultHeadroom)
}

// repeatSchema is the input schema of the "repeat" tool, whose output can
// exceed what the client's budget accepts.
const repeatSchema = `{"type": "object", "additionalProperties": false, "required": ["n"],
	"properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1000000}}}`

// newServer returns the MCP server with its tools.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "count-server", Version: "v1.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "count",
		Description: "Counts the characters and words of a text.",
		InputSchema: json.RawMessage(countSchema),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		out := fmt.Sprintf("%d characters, %d words", utf8.RuneCountInString(in.Text), len(strings.Fields(in.Text)))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}}, nil
	})
	s.AddTool(&mcp.Tool{
		Name:        "repeat",
		Description: "Returns n letters x.",
		InputSchema: json.RawMessage(repeatSchema),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}}, nil
	})
	return s
}

// handler is the HTTP side of the server: the SDK's handler, whose own body
// cap is set to the budget's so that no second, unchosen limit applies,
// behind the Middleware.
func handler(log *slog.Logger) (http.Handler, error) {
	server := newServer()
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true, MaxRequestBodyBytes: budget.MaxDecodedBytes})
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget:      budget,
		Logger:      log,
		ToolSchemas: map[string]json.RawMessage{"count": json.RawMessage(countSchema), "repeat": json.RawMessage(repeatSchema)},
		Reject:      writeJSONRPCError,
	})
	if err != nil {
		return nil, err
	}
	return mw(sdk), nil
}

// writeJSONRPCError answers a rejected body the way MCP clients read
// errors: a JSON-RPC error whose message names the stage and the limit,
// with the RFC 9457 problem as data.
//
// The request's id is unknown (its body was not read), for which JSON-RPC
// prescribes id null; go-sdk v1.8.0's client discards error responses
// whose id is null (jsonrpc2.DecodeMessage requires a valid id), so this
// answer carries rejectedID, which matches no request, and the client
// surfaces the error message.
func writeJSONRPCError(w http.ResponseWriter, _ *http.Request, e *limits.Error) {
	p := boundhttp.ProblemFor(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0",
		"id":      rejectedID,
		"error": map[string]any{
			"code":    -32600, // invalid request
			"message": "request body rejected: " + e.Error(),
			"data":    p,
		},
	})
}

// rejectedID is the JSON-RPC id of answers to rejected bodies.
const rejectedID = "boundhttp-rejected"

// newClient returns an MCP client transport whose HTTP client is bounded
// by the same budget.
func newClient(endpoint string) *mcp.StreamableClientTransport {
	return &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: &boundhttp.Transport{Budget: budget}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
}

func run(ctx context.Context, w io.Writer) error {
	report, err := checkSchema()
	if err != nil {
		return fmt.Errorf("tool schema does not fit the budget: %w", err)
	}
	fmt.Fprintf(w, "tool count: largest request %d bytes, budget %d bytes\n", report.WorstRequest, budget.MaxDecodedBytes)

	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := handler(log)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "count-client", Version: "v1.0.0"}, nil)
	session, err := client.Connect(ctx, newClient(srv.URL), nil)
	if err != nil {
		return err
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "tools: %d\n", len(tools.Tools))

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"text": "a bounded request"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "count: %s\n", res.Content[0].(*mcp.TextContent).Text)

	// 400 KiB of text: over the 256 KiB budget (and over the schema's cap).
	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "count", Arguments: map[string]any{"text": strings.Repeat("x", 400<<10)}})
	if err == nil {
		return errors.New("an oversized tool call was accepted")
	}
	fmt.Fprintf(w, "oversized count: %v\n", err)

	// A result over the client's budget: the client's Transport rejects it.
	_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "repeat", Arguments: map[string]any{"n": 300000}})
	if err == nil {
		return errors.New("an oversized tool result was accepted")
	}
	fmt.Fprintf(w, "oversized repeat: %v\n", err)
	return nil
}
