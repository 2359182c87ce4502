// Command mcp runs an MCP server (the official Go SDK's streamable HTTP
// handler) behind boundhttp.Middleware, and an MCP client whose http.Client
// uses boundhttp.Transport, on a loopback port, both charged to one
// limits.Budget. The tool's input schema is audited at start-up: its largest
// tools/call request must fit the budget with headroom, so the cap the tool
// promises is one the transport can carry. A tool call over the budget is
// answered with a JSON-RPC error that names the limit.
//
// Tool output is capped on both sides with mcpbound: the server cuts every
// tools/call result to 20,000 characters (keeping big ones in a store and
// handing them by resource_link, read back page by page), the list tool
// pages with a bounded limit and a cursor, and the client applies an
// agent's ceilings, saving a result over them to a file.
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
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/mcpbound"
	"github.com/boundhttp/boundhttp/schema"
)

// budget is what one request or response body may cost, on both sides.
var budget = limits.Budget{MaxWireBytes: 256 << 10, MaxDecodedBytes: 256 << 10}

// countSchema is the input schema of the "count" tool: every list and
// string has a ceiling. 16,000 characters fit the budget with headroom
// even from a client that escapes non-ASCII (the Python MCP SDK on httpx
// before 0.28 sends an emoji as 12 bytes, \ud83d\ude00): the audit sizes
// for it by default, and 30,000 characters did not fit.
const countSchema = `{
	"type": "object",
	"additionalProperties": false,
	"required": ["text"],
	"properties": {
		"text": {"type": "string", "maxLength": 16000, "description": "the text to count"},
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
// exceed what the client's budget accepts, were it not capped.
const repeatSchema = `{"type": "object", "additionalProperties": false, "required": ["n"],
	"properties": {"n": {"type": "integer", "minimum": 0, "maximum": 1000000}}}`

// serverLimits caps every tool result at 20,000 characters (code points).
// A character is at most 6 bytes of JSON (an escaped control character), so
// a capped result, and a page of a kept one, fits the budget; the test
// checks the relation.
var serverLimits = mcpbound.ServerLimits{MaxResultChars: 20000}

// pager pages the "items" tool: 20 items by default, never more than 100.
var pager = mcpbound.Pager{DefaultLimit: 20, MaxLimit: 100}

// itemsSchema is the input schema of the "items" tool: the pager's limit
// (with its maximum) and cursor.
var itemsSchema = `{"type": "object", "additionalProperties": false, "properties": {` + pager.SchemaProperties() + `}}`

// itemCount is how many items the "items" tool lists.
const itemCount = 1000

// item returns item i, 150 characters long.
func item(i int) string { return fmt.Sprintf("item-%04d %s", i, strings.Repeat("abcdefghij", 14)) }

// clientLimits are the agent's ceilings: the defaults real clients use,
// except that this agent keeps at most 10,000 characters of a result in
// context (the default is 50,000), so that the demonstration shows a save.
func clientLimits(dir string, log *slog.Logger) mcpbound.ClientLimits {
	return mcpbound.ClientLimits{MaxChars: 10000, SpillDir: dir, Logger: log}
}

// newServer returns the MCP server with its tools, capped by limits.
func newServer(limits mcpbound.ServerLimits) *mcp.Server {
	// The store's links are served by the middleware through resources/read;
	// the capability tells clients that the server has resources to read.
	s := mcp.NewServer(&mcp.Implementation{Name: "count-server", Version: "v1.0.0"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	s.AddReceivingMiddleware(limits.Middleware())
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
		// The tool's results, capped by the server, may all stay in the
		// agent's context (up to the client's HardMaxChars).
		Meta: mcp.Meta{mcpbound.MaxResultSizeCharsKey: 20000},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}}, nil
	})
	s.AddTool(&mcp.Tool{
		Name:        "items",
		Description: "Lists the items, a page at a time.",
		InputSchema: json.RawMessage(itemsSchema),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in mcpbound.PageArgs
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		pg, err := pager.Page(itemCount, in)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		var b strings.Builder
		for i := pg.Start; i < pg.End; i++ {
			b.WriteString(item(i+1) + "\n")
		}
		b.WriteString(pg.Line())
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.String()}}}, nil
	})
	return s
}

// handler is the HTTP side of the server: the SDK's handler, whose own body
// cap is set to the budget's so that no second, unchosen limit applies,
// behind the Middleware.
func handler(log *slog.Logger, limits mcpbound.ServerLimits) (http.Handler, error) {
	server := newServer(limits)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true, MaxRequestBodyBytes: budget.MaxDecodedBytes})
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget:      budget,
		Logger:      log,
		ToolSchemas: toolSchemas(),
		Reject:      writeJSONRPCError,
		// MCP takes nothing but JSON: check every body's shape, whatever
		// Content-Type the client declares.
		JSONAlways: true,
	})
	if err != nil {
		return nil, err
	}
	return mw(sdk), nil
}

// toolSchemas are the input schemas of the tools, by name.
func toolSchemas() map[string]json.RawMessage {
	return map[string]json.RawMessage{"count": json.RawMessage(countSchema), "repeat": json.RawMessage(repeatSchema),
		"items": json.RawMessage(itemsSchema)}
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
	p := boundhttp.ProblemOf(e)
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

	log := slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	limits := serverLimits
	limits.Store = mcpbound.NewStore(64<<20, 10*time.Minute)
	h, err := handler(log, limits)
	if err != nil {
		return err
	}
	srv := httptest.NewUnstartedServer(h)
	// As a careful operator configures a server: the Middleware bounds
	// bodies; the headers before them, a read no deadline reaches, and idle
	// connections are the server's to bound. No WriteTimeout: it would end
	// the session's long-lived event stream.
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Config.ReadTimeout = time.Minute
	srv.Config.IdleTimeout = 2 * time.Minute
	srv.Start()
	defer srv.Close()

	spill, err := os.MkdirTemp("", "mcp-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(spill)
	client := mcp.NewClient(&mcp.Implementation{Name: "count-client", Version: "v1.0.0"}, nil)
	client.AddSendingMiddleware(clientLimits(spill, log).Middleware())
	session, err := client.Connect(ctx, newClient(srv.URL), nil)
	if err != nil {
		return err
	}
	defer session.Close()
	tools, err := session.ListTools(ctx, nil) // the client learns repeat's own ceiling here
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

	// A result over the client's budget, were it whole: the server keeps it
	// and sends 20,000 characters with a marker and a link; the client reads
	// the link back, page by page, each page within the budget.
	if err := repeatLinked(ctx, w, session, 300000); err != nil {
		return err
	}

	// A list, a page at a time: the default page, the next by its cursor, a
	// limit over the maximum refused, and the largest page, over this
	// agent's 10,000 characters, saved to a file by the client.
	return listItems(ctx, w, session)
}

// repeatLinked calls repeat for n letters, over the cap, and reads the
// whole result back through its resource_link.
func repeatLinked(ctx context.Context, w io.Writer, session *mcp.ClientSession, n int) error {
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "repeat", Arguments: map[string]any{"n": n}})
	if err != nil {
		return err
	}
	var text string
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			text = c.Text
		case *mcp.ResourceLink:
			link = c
		}
	}
	if link == nil {
		return errors.New("repeat: a result over the cap came without a link")
	}
	m := strings.Index(text, "[truncated: ")
	if m < 0 {
		return errors.New("repeat: a result over the cap came without a marker")
	}
	marker, _, _ := strings.Cut(text[m:], ";")
	fmt.Fprintf(w, "repeat %d: %d characters in context, %s\n", n, utf8.RuneCountInString(text), marker)
	full, err := mcpbound.ReadLink(ctx, session, link.URI, 100, 1<<20)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "repeat %d: link of %d bytes read back: %d characters, whole: %v\n", n, *link.Size, utf8.RuneCountInString(full), full == strings.Repeat("x", n))
	return nil
}

// listItems pages through the items tool.
func listItems(ctx context.Context, w io.Writer, session *mcp.ClientSession) error {
	call := func(args map[string]any) (string, bool, error) {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "items", Arguments: args})
		if err != nil {
			return "", false, err
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError, nil
	}
	lastLine := func(s string) string { return s[strings.LastIndex(s, "\n")+1:] }
	first, _, err := call(map[string]any{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "items: %s\n", lastLine(first))
	_, cursor, _ := strings.Cut(lastLine(first), "cursor \"")
	cursor, _, _ = strings.Cut(cursor, "\"")
	second, _, err := call(map[string]any{"cursor": cursor})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "items next: %s\n", lastLine(second))
	refused, isErr, err := call(map[string]any{"limit": pager.MaxLimit + 1})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "items limit %d: error %v: %s\n", pager.MaxLimit+1, isErr, refused)
	saved, _, err := call(map[string]any{"limit": pager.MaxLimit})
	if err != nil {
		return err
	}
	// The note names a temporary path; print what it says about the size.
	if i := strings.Index(saved, " ("); strings.HasPrefix(saved, "[saved: ") && i > 0 {
		fmt.Fprintf(w, "items limit %d: saved by the client%s\n", pager.MaxLimit, saved[i:])
	} else {
		return fmt.Errorf("items limit %d: not saved: %.200s", pager.MaxLimit, saved)
	}
	return nil
}
