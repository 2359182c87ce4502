package mcpbound

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/limits"
)

// apply returns r within the limits, for tool of session s.
func (c *clientCaps) apply(s mcp.Session, tool string, r *mcp.CallToolResult) *mcp.CallToolResult {
	t := textOf(r)
	total := t.total()
	if r.IsError {
		if total <= c.MaxErrorChars {
			return r
		}
		h, l := errorEndChars, errorEndChars
		how := fmt.Sprintf("the middle %d characters of this error were cut by the client; these are its first and last %d",
			total-t.shown(h, l), errorEndChars)
		return withText(r, t, &mcp.TextContent{Text: cutAt(t.measured, h, l, how)})
	}
	tokens := c.Tokens(t.text)
	if tokens > c.WarnTokens {
		c.Logger.Warn("mcpbound: large MCP tool result", "tool", limits.Echo(tool), "tokens", tokens, "warnTokens", c.WarnTokens, "characters", total)
	}
	if t.images {
		// As in Claude Code, a result with images is never saved to a file,
		// and only the token ceiling applies to it.
		if tokens <= c.MaxTokens {
			return r
		}
		return withText(r, t, &mcp.TextContent{Text: c.fit(t.measured, t.joined, c.MaxTokens, fmt.Sprintf(
			"it is %d tokens (%s), over the limit of %d tokens; the result has images, so it was not saved to a file; ask the tool for less",
			tokens, c.tokenKind(), c.MaxTokens))})
	}
	ceiling, own := c.ceiling(s, tool)
	var why string
	switch {
	case total > ceiling:
		why = fmt.Sprintf("it is %d characters, over the limit of %d characters", total, ceiling)
	case !own && tokens > c.MaxTokens:
		why = fmt.Sprintf("it is %d tokens (%s), over the limit of %d tokens", tokens, c.tokenKind(), c.MaxTokens)
	default:
		return r
	}
	maxTokens := c.MaxTokens
	if own {
		maxTokens = 0
	}
	path, err := c.spill(tool, t.text)
	if err != nil {
		c.Logger.Warn("mcpbound: tool result not saved", "tool", limits.Echo(tool), "error", err)
		return withText(r, t, &mcp.TextContent{Text: c.fit(t.measured, ceiling, maxTokens,
			"the result could not be saved to a file ("+limits.EchoN(err.Error(), maxStoreError)+"); ask the tool for less")})
	}
	return withText(r, t, &mcp.TextContent{Text: fmt.Sprintf(
		"[saved: this tool result was saved to the file %s (%d characters, %d bytes) because %s; read the file in parts instead of asking for it whole]",
		path, t.joined, len(t.text), why)})
}

// tokenKind says how tokens are counted.
func (c *clientCaps) tokenKind() string {
	if c.ClientLimits.Tokens == nil {
		return "estimated at one per four characters"
	}
	return "as counted by ClientLimits.Tokens"
}

// fit returns the cut of m that keeps the last TailChars characters (fewer
// if the tokens demand it) and the longest head such that the whole has at
// most maxChars characters and, if maxTokens > 0, at most maxTokens tokens.
// Each search halves its range every step: at most 64 steps each.
func (c *clientCaps) fit(m measured, maxChars, maxTokens int, how string) string {
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
