package mcpbound

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/schema"
)

// TestRequestWorstCaseCoversGoSDKMeta pins the trap of a fixed _meta
// allowance sized for a progress token: from protocol 2026-07-28 the Go SDK
// client puts the client's protocol version, capabilities and info into the
// _meta of every request, tools/call included. A tool taking {} was audited
// at 295 bytes while the default client sent 297 and a client with sampling,
// elicitation, a title, a website and a one-line description 484. The real
// client's request, captured on the wire, must not pass RequestWorstCase.
func TestRequestWorstCaseCoversGoSDKMeta(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"type":"object","properties":{},"additionalProperties":false}`) // {} only: no slack in the arguments
	full := &mcp.ClientOptions{
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return nil, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil },
	}
	for _, tt := range []struct {
		name string
		impl *mcp.Implementation
		opts *mcp.ClientOptions
	}{
		{"default client", &mcp.Implementation{Name: "client", Version: "1.0.0"}, nil},
		{"every handler and a described client", &mcp.Implementation{Name: "acme-agent", Title: "Acme Agent", Version: "12.34.56",
			WebsiteURL: "https://agent.example.com/", Description: strings.Repeat("An agent that answers questions. ", 8)}, full},
		{"a description of 400 characters", &mcp.Implementation{Name: "acme-agent", Title: "Acme Agent", Version: "12.34.56",
			WebsiteURL: "https://agent.example.com/", Description: strings.Repeat("0123456789", 40)}, full},
	} {
		sent := callOnce(t, doc, tt.impl, tt.opts, map[string]any{})
		if !bytes.Contains(sent, []byte(`"io.modelcontextprotocol/clientInfo"`)) {
			t.Fatalf("%s: the request carries no client info in _meta (%s): the client no longer sends what this test is about", tt.name, sent)
		}
		worst, err := schema.RequestWorstCase("t", doc, schema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: sent %d bytes, RequestWorstCase %d", tt.name, len(sent), worst)
		if int64(len(sent)) > worst {
			t.Errorf("%s: the Go SDK client sent %d bytes, above RequestWorstCase %d: %s", tt.name, len(sent), worst, sent)
		}
	}
}

// callOnce calls tool t with args from a Go SDK client made of impl and
// opts, against a stateless server with the inputSchema doc, and returns
// the tools/call request body as it came off the wire.
func callOnce(t *testing.T, doc []byte, impl *mcp.Implementation, opts *mcp.ClientOptions, args any) []byte {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(doc)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("ok"), nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var mu sync.Mutex
	var sent []byte
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if bytes.Contains(b, []byte(`"tools/call"`)) {
			mu.Lock()
			sent = b
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := t.Context()
	cs, err := mcp.NewClient(impl, opts).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return sent
}
