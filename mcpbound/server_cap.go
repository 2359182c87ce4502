package mcpbound

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/limits"
)

// serverCaps is the checked configuration of one ServerLimits middleware.
type serverCaps struct {
	max, tail int
	store     ResultStore // nil for none
}

// typedNote begins the explanation of a cut result that had structured
// content, which is sent with isError set (see ServerLimits).
const typedNote = "the tool succeeded: this result is flagged isError only because its structured content was too large to send and cannot be sent in part; "

// capResult returns r if its text fits, else its cut or linked form.
func (c serverCaps) capResult(ctx context.Context, r *mcp.CallToolResult) *mcp.CallToolResult {
	t := textOf(r)
	if t.total() <= c.max {
		return r
	}
	out := func(blocks ...mcp.Content) *mcp.CallToolResult {
		o := withText(r, t, blocks...)
		o.IsError = r.IsError || t.structured
		return o
	}
	if r.IsError {
		return out(&mcp.TextContent{Text: c.cut(t, "", "the rest of this error message was cut by the server's result limit")})
	}
	typed := ""
	if t.structured {
		typed = typedNote
	}
	if c.store == nil {
		return out(&mcp.TextContent{Text: c.cut(t, typed,
			"the rest was not kept; call the tool again asking for less (a narrower query, a smaller limit, or one page at a time)")})
	}
	mime := "text/plain; charset=utf-8"
	if t.onlyJSON {
		mime = "application/json"
	}
	id := newID()
	pages := splitPages(t.text, c.max-noteRoom(t.joined))
	err := c.store.Put(ctx, id, mime, pages)
	switch {
	case errors.Is(err, ErrResultTooLarge):
		return out(&mcp.TextContent{Text: c.cut(t, typed,
			"the full result was too large to keep; call the tool again asking for less (a narrower query, a smaller limit, or one page at a time)")})
	case err != nil:
		return out(&mcp.TextContent{Text: c.cut(t, typed,
			"the full result could not be kept ("+limits.EchoN(err.Error(), maxStoreError)+"); call the tool again, asking for less if you can",
			"the full result could not be kept; call the tool again, asking for less if you can")})
	}
	uri := ResultURIPrefix + id
	size := int64(len(t.text))
	n := strconv.Itoa(len(pages))
	return out(
		&mcp.TextContent{Text: c.cut(t, typed,
			fmt.Sprintf("the full result is the resource %s (%d characters, %d bytes, %s pages); read it with resources/read: "+
				"each page but the last names the next page's URI in its text; it expires in %v",
				uri, t.joined, size, n, c.store.TTL()),
			"the full result is the resource "+uri+" ("+n+" pages); read it with resources/read, each page names the next")},
		&mcp.ResourceLink{URI: uri, Name: "result-" + id[:8], MIMEType: mime, Size: &size,
			Description: fmt.Sprintf("full tool result, %d characters in %s pages", t.joined, n)})
}

// cut returns t cut to the cap with the marker. hows are explanations from
// the longest to the shortest, each after typed (typedNote or ""): the first
// whose marker leaves room for the tail is taken (at a small cap a long one
// would not fit), else the last, after a shorter typed note.
func (c serverCaps) cut(t resultText, prefix string, hows ...string) string {
	how := prefix + hows[len(hows)-1]
	total := t.total()
	for _, h := range hows {
		if chars(endsMarker(total, total, total, prefix+h))+2+c.tail <= c.max {
			how = prefix + h
			break
		}
	}
	if chars(endsMarker(total, total, total, how))+2+c.tail > c.max && prefix != "" {
		how = "flagged isError only because it was cut; " + hows[len(hows)-1]
	}
	return cutToFit(t.measured, c.tail, c.max, how)
}
