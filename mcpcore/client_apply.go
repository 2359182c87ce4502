package mcpcore

import (
	"fmt"

	"github.com/boundhttp/boundhttp/limits"
)

// Apply returns nil if r, a result of tool in session (as given to
// [Client.Learn]), is within the limits, else how to rewrite it: saved to
// a file and named, cut with the marker, or an error trimmed to its ends
// (see [ClientLimits]). It logs the warnings.
func (c *Client) Apply(session any, tool string, r Result) *Replacement {
	s := session
	t := textOf(r)
	total := t.total()
	if r.IsError {
		if total <= c.MaxErrorChars {
			return nil
		}
		h, l := errorEndChars, errorEndChars
		how := fmt.Sprintf("the middle %d characters of this error were cut by the client; these are its first and last %d",
			total-t.shown(h, l), errorEndChars)
		return replace(t, cutAt(t.measured, h, l, how), nil, r.IsError)
	}
	tokens := c.Tokens(t.text)
	if tokens > c.WarnTokens {
		c.Logger.Warn("mcpbound: large MCP tool result", "tool", limits.Echo(tool), "tokens", tokens, "warnTokens", c.WarnTokens, "characters", total)
	}
	if t.images {
		// As in Claude Code, a result with images is never saved to a file,
		// and only the token ceiling applies to it.
		if tokens <= c.MaxTokens {
			return nil
		}
		return replace(t, c.fit(t.measured, t.joined, c.MaxTokens, fmt.Sprintf(
			"it is %d tokens (%s), over the limit of %d tokens; the result has images, so it was not saved to a file; ask the tool for less",
			tokens, c.tokenKind(), c.MaxTokens)), nil, r.IsError)
	}
	ceiling, own := c.ceiling(s, tool)
	var why string
	switch {
	case total > ceiling:
		why = fmt.Sprintf("it is %d characters, over the limit of %d characters", total, ceiling)
	case !own && tokens > c.MaxTokens:
		why = fmt.Sprintf("it is %d tokens (%s), over the limit of %d tokens", tokens, c.tokenKind(), c.MaxTokens)
	default:
		return nil
	}
	maxTokens := c.MaxTokens
	if own {
		maxTokens = 0
	}
	path, err := c.spill(tool, t.text)
	if err != nil {
		c.Logger.Warn("mcpbound: tool result not saved", "tool", limits.Echo(tool), "error", err)
		return replace(t, c.fit(t.measured, ceiling, maxTokens, c.notSaved(err, total, ceiling)), nil, r.IsError)
	}
	return replace(t, fmt.Sprintf(
		"[saved: this tool result was saved to the file %s (%d characters, %d bytes) because %s; read the file in parts instead of asking for it whole]",
		path, t.joined, len(t.text), why), nil, r.IsError)
}

// notSaved explains a result that could not be saved, echoing err (the
// file system's words, which may quote a path of any script) to at most
// maxStoreError bytes, fewer when its escaped form would not leave the
// marker room beside the tail within maxChars: each byte outside printable
// ASCII is written as 4 characters, so 300 bytes of a path in another
// script are 1,200 characters. The loop halves the bound: at most 10 steps.
func (c *Client) notSaved(err error, total, maxChars int) string {
	how := func(n int) string {
		return "the result could not be saved to a file (" + limits.EchoN(err.Error(), n) + "); ask the tool for less"
	}
	l := min(c.TailChars, max(0, maxChars-MinClientChars))
	n := maxStoreError
	for n > 0 && chars(endsMarker(total, total, total, how(n)))+2+l > maxChars {
		n /= 2
	}
	return how(n)
}

// tokenKind says how tokens are counted.
func (c *Client) tokenKind() string {
	if c.ClientLimits.Tokens == nil {
		return "estimated at one per four characters"
	}
	return "as counted by ClientLimits.Tokens"
}

// fit returns the cut of m that keeps the last TailChars characters (fewer
// if the tokens demand it) and the longest head such that the whole has at
// most maxChars characters and, if maxTokens > 0, at most maxTokens tokens.
// Each search halves its range every step: at most 64 steps each.
func (c *Client) fit(m measured, maxChars, maxTokens int, how string) string {
	ok := func(n, l int) bool { return maxTokens <= 0 || c.Tokens(cutAt(m, n, l, how)) <= maxTokens }
	l := min(c.TailChars, max(0, maxChars-MinClientChars))
	if !ok(0, l) {
		// The tail alone is over the tokens: keep less of it (ok(0, 0) is
		// assumed, a marker alone being a few dozen tokens).
		lo, hi := 0, l
		for hi-lo > 1 {
			if mid := lo + (hi-lo)/2; ok(0, mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		l = lo
	}
	hi := fitHead(m, l, maxChars, how)
	if ok(hi, l) {
		return cutAt(m, hi, l, how)
	}
	lo := 0
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; ok(mid, l) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return cutAt(m, lo, l, how)
}

// TrimError returns msg, the message of a JSON-RPC error a server sent, as
// an error result's text is trimmed (see Apply): at most MaxErrorChars, its
// first and last 5,000 characters with the marker between them.
func (c *Client) TrimError(msg string) string {
	rep := c.Apply(nil, "", Result{IsError: true, Content: []Content{{Kind: Text, Text: msg}}})
	if rep == nil {
		return msg
	}
	return rep.Text
}
