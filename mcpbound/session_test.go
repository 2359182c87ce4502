package mcpbound

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// sessionBudget bounds every body of the session tests, both ways: room
// for a page of 20,000 characters of up to four bytes each, not for 1 MiB.
var sessionBudget = limits.Budget{MaxWireBytes: 256 << 10, MaxDecodedBytes: 256 << 10}

// mib returns exactly 1 MiB of mixed one- to four-byte text.
func mib() string {
	s := mixed(1 << 20)
	for len(s) > 1<<20 {
		s = head(s, chars(s)-(len(s)-(1<<20))/4-1)
	}
	return s + strings.Repeat("x", 1<<20-len(s))
}

// startSession serves a server whose tool "big" returns text, with mw (if
// any) as its receiving middleware, behind boundhttp's Middleware over
// loopback, and connects a client on boundhttp's Transport.
func startSession(t *testing.T, text string, mws ...mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "v1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	server.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult(text), nil })
	server.AddReceivingMiddleware(mws...)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true, MaxRequestBodyBytes: sessionBudget.MaxDecodedBytes})
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: sessionBudget})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(sdk))
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:             srv.URL,
		HTTPClient:           &http.Client{Transport: &boundhttp.Transport{Budget: sessionBudget}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callBig(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSessionMarker: over a real session, 1 MiB of text is cut to the
// 20,000-character cap with the right N and M; without the cap the same
// result breaks the client's budget.
func TestSessionMarker(t *testing.T) {
	text := mib()
	out := onlyText(t, callBig(t, startSession(t, text, ServerLimits{MaxResultChars: 20000}.Middleware())))
	n, m := parseMarker(t, out)
	if m != chars(text) || n < 19000 || chars(out) > 20000 || !strings.HasPrefix(out, head(text, n)+"\n[truncated: showing ") {
		t.Errorf("marker %d of %d over %d characters, want M = %d and the head of N characters", n, m, chars(out), chars(text))
	}
	if _, err := startSession(t, text).CallTool(context.Background(), &mcp.CallToolParams{Name: "big"}); err == nil {
		t.Error("1 MiB uncapped passed a 256 KiB budget")
	}
}

// TestSessionLink: with a store, the client follows the resource_link
// through resources/read pages of at most the cap and reassembles the
// exact original; after the time to live the link fails, saying so.
func TestSessionLink(t *testing.T) {
	text := mib()
	store := &expiringStore{ResultStore: NewStore(64<<20, 10*time.Minute)}
	cs := startSession(t, text, ServerLimits{MaxResultChars: 20000, Store: store}.Middleware())
	res := callBig(t, cs)
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil || link.Size == nil || *link.Size != 1<<20 {
		t.Fatalf("no resource_link of 1 MiB in %v", res.Content)
	}
	if _, m := parseMarker(t, onlyText(t, res)); m != chars(text) {
		t.Errorf("preview marker says %d characters, want %d", m, chars(text))
	}
	var b strings.Builder
	pages := 0
	for uri := link.URI; uri != "" && pages < 100; pages++ {
		page, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatal(err)
		}
		if c := chars(page.Contents[0].Text) + chars(page.Contents[1].Text); c > 20000 {
			t.Errorf("page %d: %d characters with its note, cap 20000", pages+1, c)
		}
		b.WriteString(page.Contents[0].Text)
		uri, _ = page.Meta[NextKey].(string)
	}
	per := 20000 - noteRoom(chars(text))
	if b.String() != text || pages != (chars(text)+per-1)/per {
		t.Errorf("%d pages join to %d bytes; want the original %d bytes in %d pages", pages, b.Len(), len(text), (chars(text)+per-1)/per)
	}
	got, err := ReadLink(context.Background(), cs, link.URI, 100, 1<<21)
	if err != nil || got != text {
		t.Errorf("ReadLink: %d bytes, %v", len(got), err)
	}
	if _, err := ReadLink(context.Background(), cs, link.URI, pages-1, 1<<21); err == nil {
		t.Error("ReadLink with one page too few returned a prefix as the whole")
	}
	store.Expired.Store(true)
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI})
	if err == nil || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "call the tool again") {
		t.Errorf("expired link: %v, want an error saying it expired and what to do", err)
	}
}

// TestSessionInvalidUTF8Link: a tool's text with invalid UTF-8 (and the
// bytes of an encoded surrogate, which Go treats as invalid) reaches the
// client with each bad byte replaced by U+FFFD, as encoding/json writes it.
// The link's size and the preview's byte count must describe what the
// client reassembles: the replaced text. Found: the link said 4,500 bytes
// for a text the client reassembled as 10,500 bytes.
func TestSessionInvalidUTF8Link(t *testing.T) {
	raw := strings.Repeat("ok\xff\xed\xa0\x80", 750) // 4,500 bytes, 4,500 characters
	server := mcp.NewServer(&mcp.Implementation{Name: "bad", Version: "v1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	server.AddTool(&mcp.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return textResult(raw), nil })
	server.AddReceivingMiddleware(ServerLimits{MaxResultChars: 1000, Store: NewStore(0, 0)}.Middleware())
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bad", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil || link.Size == nil {
		t.Fatalf("no link with a size: %v", res.Content)
	}
	got, err := ReadLink(context.Background(), cs, link.URI, 10, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("ok\uFFFD\uFFFD\uFFFD\uFFFD", 750); got != want {
		t.Errorf("reassembled %d bytes, want %d", len(got), len(want))
	}
	if *link.Size != int64(len(got)) {
		t.Errorf("link size %d bytes, the client reassembled %d", *link.Size, len(got))
	}
	if n, m := parseMarker(t, onlyText(t, res)); m != chars(got) || !strings.Contains(onlyText(t, res), itoa(len(got))+" bytes") {
		t.Errorf("marker %d of %d characters, preview %q; the client got %d characters, %d bytes", n, m, clip(onlyText(t, res)), chars(got), len(got))
	}
}
