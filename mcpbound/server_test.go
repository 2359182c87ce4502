package mcpbound

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServerCapBoundary: a result of exactly MaxResultChars characters
// passes untouched; one more is cut to at most MaxResultChars with a marker
// whose N and M are right. Sabotage: comparing with <= max+1 passes the
// over-by-one result and fails here.
func TestServerCapBoundary(t *testing.T) {
	for _, max := range []int{0, 256, 1000} {
		lim := ServerLimits{MaxResultChars: max}
		if max == 0 {
			max = DefaultMaxResultChars
		}
		mw := lim.Middleware()
		at := textResult(mixed(max))
		if got := serverCall(t, mw, at); got != at {
			t.Errorf("max %d: a result of exactly %d characters was changed", max, max)
		}
		s := mixed(max + 1)
		out := onlyText(t, serverCall(t, mw, textResult(s)))
		n, m := parseMarker(t, out)
		if m != max+1 || !strings.HasPrefix(out, head(s, n)+"\n[truncated: showing ") {
			t.Errorf("max %d: marker says %d of %d, want the head of %d characters", max, n, m, max+1)
		}
		if chars(out) > max || !utf8.ValidString(out) {
			t.Errorf("max %d: cut result has %d characters (valid UTF-8: %v)", max, chars(out), utf8.ValidString(out))
		}
	}
}

// TestServerTextBlocksTogether: the cap counts all text blocks together,
// joined by newlines, and leaves images alone.
func TestServerTextBlocksTogether(t *testing.T) {
	img := &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}
	r := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: strings.Repeat("a", 600)}, img, &mcp.TextContent{Text: strings.Repeat("b", 600)}}}
	out := serverCall(t, ServerLimits{MaxResultChars: 1000}.Middleware(), r)
	if len(out.Content) != 2 || out.Content[1] != img {
		t.Fatalf("cut result content %v, want the cut text then the image", out.Content)
	}
	if _, m := parseMarker(t, onlyText(t, out)); m != 1200 {
		t.Errorf("M = %d, want 1200 (600 + 600)", m)
	}
	if len(r.Content) != 3 {
		t.Errorf("the tool's own result was modified")
	}
}

// TestServerStructuredCountedOnce: structured content and a text block
// equal to its serialization count once; structured content with no such
// block counts on its own. Sabotage: counting both doubles 700 to 1401
// and cuts the first result.
func TestServerStructuredCountedOnce(t *testing.T) {
	sc := map[string]any{"v": strings.Repeat("x", 690)}
	js, _ := json.Marshal(sc)
	mw := ServerLimits{MaxResultChars: 1000}.Middleware()
	dup := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(js)}}, StructuredContent: sc}
	if got := serverCall(t, mw, dup); got != dup {
		t.Errorf("structured content with its own text copy (%d characters) was cut", len(js))
	}
	alone := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("y", 400)}}, StructuredContent: sc}
	out := serverCall(t, mw, alone)
	if out.StructuredContent != nil {
		t.Errorf("cut result kept structuredContent")
	}
	if _, m := parseMarker(t, onlyText(t, out)); m != 400+len(js) {
		t.Errorf("M = %d, want %d", m, 400+len(js))
	}
}

// TestServerErrorCut: an error text over the cap is cut the same way and
// never kept in the store.
func TestServerErrorCut(t *testing.T) {
	store := &countingStore{ResultStore: NewStore(1<<20, time.Minute)}
	r := textResult(strings.Repeat("e", 5000))
	r.IsError = true
	out := serverCall(t, ServerLimits{MaxResultChars: 1000, Store: store}.Middleware(), r)
	if !out.IsError || chars(onlyText(t, out)) > 1000 || len(out.Content) != 1 {
		t.Errorf("error result: isError %v, %d blocks, %d characters", out.IsError, len(out.Content), chars(onlyText(t, out)))
	}
	if n, m := parseMarker(t, onlyText(t, out)); m != 5000 || n < 800 {
		t.Errorf("marker %d of %d", n, m)
	}
	if store.Puts() != 0 {
		t.Errorf("an error result was kept")
	}
}

// TestServerLimitsValidate: below the minimum and negative caps are
// configuration errors that Middleware panics on.
func TestServerLimitsValidate(t *testing.T) {
	for _, v := range []int{-1, 1, MinResultChars - 1} {
		if (ServerLimits{MaxResultChars: v}).Validate() == nil {
			t.Errorf("MaxResultChars %d accepted", v)
		}
	}
	if err := (ServerLimits{MaxResultChars: MinResultChars}).Validate(); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Middleware of an invalid configuration did not panic")
		}
	}()
	ServerLimits{MaxResultChars: -5}.Middleware()
}

// linked runs the store-backed middleware and returns the result's link.
func linked(t *testing.T, mw mcp.Middleware, s string) (*mcp.CallToolResult, *mcp.ResourceLink) {
	t.Helper()
	out := serverCall(t, mw, textResult(s))
	for _, c := range out.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			return out, l
		}
	}
	return out, nil
}

// readPage calls mw for resources/read of uri.
func readPage(mw mcp.Middleware, uri string) (*mcp.ReadResourceResult, error) {
	h := mw(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return nil, errors.New("passed to the server")
	})
	res, err := h(context.Background(), "resources/read", &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		return nil, err
	}
	return res.(*mcp.ReadResourceResult), nil
}

// TestStorePages: a kept result is served in pages whose data and
// navigation note together have at most the cap; each page's note names the
// next page's URI in its text, and a reader that follows only URIs found in
// content text (never _meta) reaches the last page, whose data join to the
// original. Sabotage: pages of the cap's size (the note not reserved) fail
// the page-size check; a note without the URI stops the text-only reader at
// page 1.
func TestStorePages(t *testing.T) {
	store := NewStore(1<<20, time.Minute)
	mw := ServerLimits{MaxResultChars: 1000, Store: store}.Middleware()
	s := mixed(3500)
	out, link := linked(t, mw, s)
	if link == nil || !strings.HasPrefix(link.URI, ResultURIPrefix) || len(link.URI) != len(ResultURIPrefix)+32 ||
		link.Size == nil || *link.Size != int64(len(s)) || link.MIMEType == "" || link.Name == "" {
		t.Fatalf("link %+v", link)
	}
	pages := (3500 + 1000 - noteRoom(3500) - 1) / (1000 - noteRoom(3500))
	preview := onlyText(t, out)
	if n, m := parseMarker(t, preview); m != 3500 || chars(preview) > 1000 || !strings.HasPrefix(preview, head(s, n)) ||
		!strings.Contains(preview, link.URI+" (") || !strings.Contains(preview, itoa(pages)+" pages") {
		t.Errorf("preview %q does not name the link and its %d pages", clip(preview), pages)
	}
	var got strings.Builder
	uri := link.URI
	read := 0
	for ; read < 20 && uri != ""; read++ {
		page, err := readPage(mw, uri)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Contents) != 2 || page.Contents[1].Meta[NavigationKey] != true {
			t.Fatalf("page %d: %d contents items, want the data and the navigation note", read+1, len(page.Contents))
		}
		data, note := page.Contents[0].Text, page.Contents[1].Text
		if c := chars(data) + chars(note); c > 1000 {
			t.Errorf("page %d: %d characters with its note, cap 1000", read+1, c)
		}
		got.WriteString(data)
		uri = nextInText(note)
		if next, _ := page.Meta[NextKey].(string); next != uri {
			t.Errorf("page %d: the note names %q, _meta.next %q", read+1, uri, next)
		}
		if !strings.Contains(note, "page "+itoa(read+1)+" of "+itoa(pages)) {
			t.Errorf("page %d: note %q", read+1, note)
		}
	}
	if got.String() != s || read != pages {
		t.Errorf("%d pages join to %d characters, want the original %d in %d pages", read, chars(got.String()), chars(s), pages)
	}
	if _, err := readPage(mw, link.URI+"?page="+itoa(pages+1)); err == nil {
		t.Errorf("page %d of %d read", pages+1, pages)
	}
	if _, err := readPage(mw, ResultURIPrefix+strings.Repeat("0", 32)); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("unknown link: %v", err)
	}
	if _, err := readPage(mw, "file:///etc/passwd"); err == nil || !strings.Contains(err.Error(), "passed to the server") {
		t.Errorf("a read outside the scheme was not passed on: %v", err)
	}
}

// nextInText returns the first result URI in text that is not the page
// itself, as a client that hands a model the text would find it.
var resultURIRE = regexp.MustCompile(`mcpbound://result/[0-9a-f]{32}(\?page=[0-9]+)?`)

func nextInText(text string) string { return resultURIRE.FindString(text) }

// TestServerEmbeddedText: an embedded text resource is text, counted and
// cut with the rest; an embedded blob passes. Sabotage: leaving embedded
// resources out of the count lets 5,000 characters through.
func TestServerEmbeddedText(t *testing.T) {
	blob := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte("bin")}}
	r := &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///t", Text: strings.Repeat("r", 5000)}}, blob}}
	out := serverCall(t, ServerLimits{MaxResultChars: 1000}.Middleware(), r)
	if len(out.Content) != 2 || out.Content[1] != blob {
		t.Fatalf("content %v, want the cut text then the blob", out.Content)
	}
	if _, m := parseMarker(t, onlyText(t, out)); m != 5000 {
		t.Errorf("M = %d, want 5000", m)
	}
}

// TestStoreMarkerFitsMinimumCap: at the smallest cap a Store-backed
// preview (marker, link URI and how to read it) still fits in
// MaxResultChars; the long explanation must not push the block over the
// cap. Found: at 256 and 300 characters the preview had 306.
func TestStoreMarkerFitsMinimumCap(t *testing.T) {
	for _, max := range []int{MinResultChars, 300, 400} {
		mw := ServerLimits{MaxResultChars: max, Store: NewStore(0, 0)}.Middleware()
		s := mixed(100000)
		out, link := linked(t, mw, s)
		if link == nil {
			t.Fatalf("max %d: no link", max)
		}
		preview := onlyText(t, out)
		n, m := parseMarker(t, preview)
		if c := chars(preview); c > max {
			t.Errorf("max %d: preview has %d characters: %q", max, c, clip(preview))
		}
		if m != 100000 || !strings.HasPrefix(preview, head(s, n)+"\n") || !strings.Contains(preview, link.URI) {
			t.Errorf("max %d: preview %q does not name the link with the right N and M", max, clip(preview))
		}
	}
}
