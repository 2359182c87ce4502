package mcpbound

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/limits"
)

// apply returns r within the limits, for tool of session s.
func (c *clientCaps) apply(s mcp.Session, tool string, r *mcp.CallToolResult) *mcp.CallToolResult {
	t := textOf(r)
	total := chars(t.text)
	if r.IsError {
		if total <= c.MaxErrorChars {
			return r
		}
		cut := total - 2*errorEndChars
		m := marker(2*errorEndChars, total, fmt.Sprintf("the middle %d characters of this error were cut by the client; these are its first and last %d", cut, errorEndChars))
		return withText(r, t, &mcp.TextContent{Text: head(t.text, errorEndChars) + "\n" + m + "\n" + tail(t.text, errorEndChars)})
	}
	tokens := c.Tokens(t.text)
	if tokens > c.WarnTokens {
		c.Logger.Warn("mcpbound: large MCP tool result", "tool", limits.Echo(tool), "tokens", tokens, "warnTokens", c.WarnTokens, "characters", total)
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
	if t.images {
		return withText(r, t, &mcp.TextContent{Text: c.fit(t.text, total, ceiling, maxTokens,
			"the result has images, so it was not saved to a file; ask the tool for less")})
	}
	path, err := c.spill(tool, t.text)
	if err != nil {
		c.Logger.Warn("mcpbound: tool result not saved", "tool", limits.Echo(tool), "error", err)
		return withText(r, t, &mcp.TextContent{Text: c.fit(t.text, total, ceiling, maxTokens,
			"the result could not be saved to a file ("+limits.Echo(err.Error())+"); ask the tool for less")})
	}
	return withText(r, t, &mcp.TextContent{Text: fmt.Sprintf(
		"[saved: this tool result was saved to the file %s (%d characters, %d bytes) because %s; read the file in parts instead of asking for it whole]",
		path, total, len(t.text), why)})
}

// tokenKind says how tokens are counted.
func (c *clientCaps) tokenKind() string {
	if c.ClientLimits.Tokens == nil {
		return "estimated at one per four characters"
	}
	return "as counted by ClientLimits.Tokens"
}

// fit returns the longest head of text that, with a newline and the marker,
// has at most maxChars characters and, if maxTokens > 0, at most maxTokens
// tokens. The search halves the range each step: at most 64 steps.
func (c *clientCaps) fit(text string, total, maxChars, maxTokens int, how string) string {
	build := func(n int) string { return head(text, n) + "\n" + marker(n, total, how) }
	hi := shownFit(total, maxChars, how)
	ok := func(n int) bool { return maxTokens <= 0 || c.Tokens(build(n)) <= maxTokens }
	if ok(hi) {
		return build(hi)
	}
	lo := 0 // ok(0) is assumed: a marker alone is a few dozen tokens
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return build(lo)
}
