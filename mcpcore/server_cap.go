package mcpcore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/boundhttp/boundhttp/limits"
)

// typedNote begins the explanation of a cut result that had structured
// content, which is sent with isError set (see ServerLimits).
const typedNote = "the tool succeeded: this result is flagged isError only because its structured content was too large to send and cannot be sent in part; "

// Cap returns nil if the text of r fits the limits, else how to rewrite r:
// cut with the marker, or kept in the store and linked (see
// [ServerLimits]). ctx bounds the store's Put.
func (c *Server) Cap(ctx context.Context, r Result) *Replacement {
	t := textOf(r)
	if t.total() <= c.max {
		return nil
	}
	out := func(text string, link *Link) *Replacement {
		return replace(t, text, link, r.IsError || t.structured)
	}
	if r.IsError {
		return out(c.cut(t, "", "the rest of this error message was cut by the server's result limit"), nil)
	}
	typed := ""
	if t.structured {
		typed = typedNote
	}
	if c.store == nil {
		return out(c.cut(t, typed,
			"the rest was not kept; call the tool again asking for less (a narrower query, a smaller limit, or one page at a time)"), nil)
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
		return out(c.cut(t, typed,
			"the full result was too large to keep; call the tool again asking for less (a narrower query, a smaller limit, or one page at a time)"), nil)
	case err != nil:
		return out(c.cut(t, typed,
			"the full result could not be kept ("+limits.EchoN(err.Error(), maxStoreError)+"); call the tool again, asking for less if you can",
			"the full result could not be kept; call the tool again, asking for less if you can"), nil)
	}
	uri := ResultURIPrefix + id
	size := int64(len(t.text))
	n := strconv.Itoa(len(pages))
	return out(
		c.cut(t, typed,
			fmt.Sprintf("the full result is the resource %s (%d characters, %d bytes, %s pages); read it with resources/read: "+
				"each page but the last names the next page's URI in its text; it expires in %v",
				uri, t.joined, size, n, c.store.TTL()),
			"the full result is the resource "+uri+" ("+n+" pages); read it with resources/read, each page names the next"),
		&Link{URI: uri, Name: "result-" + id[:8], MIMEType: mime, Size: size,
			Description: fmt.Sprintf("full tool result, %d characters in %s pages", t.joined, n)})
}

// cut returns t cut to the cap with the marker. hows are explanations from
// the longest to the shortest, each after typed (typedNote or ""): the first
// whose marker leaves room for the tail is taken (at a small cap a long one
// would not fit), else the last, after a shorter typed note.
func (c *Server) cut(t resultText, prefix string, hows ...string) string {
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
	// The block never passes the cap: when even the shortest explanation
	// leaves less room than TailChars (a typed result linked to a store,
	// TailChars near its maximum), the tail gives way, not the cap.
	l := min(c.tail, max(0, c.max-2-chars(endsMarker(total, total, total, how))))
	return cutToFit(t.measured, l, c.max, how)
}

// CapError returns msg, the text of an error on its way to a model (a
// protocol error's message), cut to the cap as an error result's text is
// (see Cap): it is never kept in the store.
func (c *Server) CapError(msg string) string {
	rep := c.Cap(context.Background(), Result{IsError: true, Content: []Content{{Kind: Text, Text: msg}}})
	if rep == nil {
		return msg
	}
	return rep.Text
}

// CapRead returns the text of a resources/read or prompts/get answer, its
// parts joined by "\n", cut to the cap with a marker naming what (a
// resource, a prompt), and whether it was cut; an answer within the cap is
// returned as nil, false. It never keeps anything in the store.
func (c *Server) CapRead(parts []string, what string) (string, bool) {
	content := make([]Content, len(parts))
	for i, p := range parts {
		content[i] = Content{Kind: Text, Text: p}
	}
	t := textOf(Result{Content: content})
	if t.total() <= c.max {
		return "", false
	}
	return c.cut(t, "", "the rest of this "+what+" was cut by the server's limit; ask for a narrower one if the server offers it",
		"the rest of this "+what+" was cut by the server's limit"), true
}
