package mcpgo

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// TestServerCapBoundary: through the middleware on a real mcp-go server, a
// result of exactly the cap passes whole and one character more is cut
// with the marker "showing N of M", the whole block within the cap.
// Sabotage: comparing with >= in the core's Cap cut the result of exactly
// the cap.
func TestServerCapBoundary(t *testing.T) {
	const limit = 1000
	texts := map[string]string{}
	for name, n := range map[string]int{"below": limit - 1, "at": limit, "above": limit + 1, "huge": 1 << 20} {
		texts[name] = mixed(n)
	}
	s := newServer(texts, server.WithToolHandlerMiddleware(ServerLimits{MaxResultChars: limit}.Middleware()))
	c := connect(t, serve(t, s), nil)
	for _, name := range []string{"below", "at", "above", "huge"} {
		text, _ := textOf(call(t, c, name))
		if chars(texts[name]) <= limit {
			if text != texts[name] {
				t.Errorf("%s: a result of %d characters was changed", name, chars(texts[name]))
			}
			continue
		}
		n, m := parseMarker(t, text)
		if m != chars(texts[name]) || chars(text) > limit || !strings.HasPrefix(texts[name], text[:strings.Index(text, "\n[truncated")]) ||
			chars(text[:strings.Index(text, "\n[truncated")]) != n {
			t.Errorf("%s: marker %d of %d over %d characters: %q", name, n, m, chars(text), clip(text))
		}
	}
}

// TestServerTypedToolCutIsError: a typed tool's (output schema) result over
// the cap is sent without structured content, flagged isError, and its
// marker says the tool succeeded; one under the cap keeps its structured
// content. Sabotage: dropping the structured-output rule in the core
// (isError left as the tool set it) fails the isError check.
func TestServerTypedToolCutIsError(t *testing.T) {
	s := newServer(map[string]string{}, ServerLimits{MaxResultChars: 2000}.Option())
	c := connect(t, serve(t, s), nil)
	if r := call(t, c, "small"); r.IsError || r.StructuredContent == nil {
		t.Errorf("small typed result: isError %v, structured %v", r.IsError, r.StructuredContent)
	}
	r := call(t, c, "large")
	text, _ := textOf(r)
	full, _ := json.Marshal(listOut{Items: items(100)})
	if _, m := parseMarker(t, text); !r.IsError || r.StructuredContent != nil || m != len(full) || !strings.Contains(text, "the tool succeeded") {
		t.Errorf("large typed result: isError %v, structured %v, M %d (want %d), %q", r.IsError, r.StructuredContent != nil, m, len(full), clip(text))
	}
}

// TestServerLinkPages: with a store, the option mints a link that the same
// MCPServer serves page by page through resources/read; ReadLink
// reassembles the result byte-exact; each page's note names the next
// page's URI in its text; a link never issued and an expired one say so.
// Sabotage: an Option that does not add the resource template makes the
// first read fail ("handler not found").
func TestServerLinkPages(t *testing.T) {
	store := &expiring{ResultStore: mcpcore.NewStore(0, 0)}
	s := newServer(map[string]string{}, ServerLimits{MaxResultChars: mcpcore.MinResultChars, Store: store}.Option())
	c := connect(t, serve(t, s), nil)
	preview, link := textOf(call(t, c, "text"))
	if link == "" || !strings.Contains(preview, link) {
		t.Fatalf("no link in %q", clip(preview))
	}
	got, err := ReadLink(context.Background(), c, link, 1000, 1<<20)
	if err != nil || got != mixed(9000) {
		t.Fatalf("ReadLink: %d of %d characters, exact %v, %v", chars(got), 9000, got == mixed(9000), err)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = link
	page, err := c.ReadResource(context.Background(), req)
	if err != nil || len(page.Contents) != 2 {
		t.Fatalf("page 1: %v, %v", page, err)
	}
	note := page.Contents[1].(mcp.TextResourceContents)
	if !strings.Contains(note.Text, link+"?page=2") || note.Meta[mcpcore.NextKey] != link+"?page=2" {
		t.Errorf("page 1's note %q, _meta %v: want the next page's URI in both", note.Text, note.Meta)
	}
	req.Params.URI = mcpcore.ResultURIPrefix + strings.Repeat("0", 32)
	if _, err := c.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "unknown result link") {
		t.Errorf("a link never issued: %v", err)
	}
	store.Expired.Store(true)
	req.Params.URI = link
	if _, err := c.ReadResource(context.Background(), req); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired link: %v", err)
	}
}

// TestServerValidate: the limits the core refuses are refused here, and
// Option and Middleware panic on them.
func TestServerValidate(t *testing.T) {
	for _, l := range []ServerLimits{{MaxResultChars: -1}, {MaxResultChars: mcpcore.MinResultChars - 1}, {TailChars: -1},
		{MaxResultChars: 1000, TailChars: 1000 - mcpcore.MinResultChars + 1}} {
		if l.Validate() == nil {
			t.Errorf("%+v accepted", l)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: Option did not panic", l)
				}
			}()
			l.Option()
		}()
	}
	for _, l := range []ServerLimits{{}, {MaxResultChars: mcpcore.MinResultChars}, {MaxResultChars: 1 << 62, TailChars: 1000}} {
		if err := l.Validate(); err != nil {
			t.Errorf("%+v refused: %v", l, err)
		}
	}
}
