package mcpbound

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// coreResult returns r as the core sees it: each content item's kind and
// text, the structured content and isError.
func coreResult(r *mcp.CallToolResult) mcpcore.Result {
	out := mcpcore.Result{Content: make([]mcpcore.Content, len(r.Content)), Structured: r.StructuredContent, IsError: r.IsError}
	for i, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			out.Content[i] = mcpcore.Content{Kind: mcpcore.Text, Text: c.Text}
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				out.Content[i] = mcpcore.Content{Kind: mcpcore.Text, Text: c.Resource.Text}
			}
		case *mcp.ImageContent:
			out.Content[i] = mcpcore.Content{Kind: mcpcore.Image}
		}
	}
	return out
}

// rewrite returns r rewritten as rep says, or r itself when rep is nil. r
// is not modified.
func rewrite(r *mcp.CallToolResult, rep *mcpcore.Replacement) *mcp.CallToolResult {
	if rep == nil {
		return r
	}
	out := *r
	out.StructuredContent = nil
	out.IsError = rep.IsError
	out.Content = make([]mcp.Content, 0, 2+len(rep.Keep))
	out.Content = append(out.Content, &mcp.TextContent{Text: rep.Text})
	if l := rep.Link; l != nil {
		size := l.Size
		out.Content = append(out.Content, &mcp.ResourceLink{URI: l.URI, Name: l.Name, MIMEType: l.MIMEType, Size: &size, Description: l.Description})
	}
	for _, i := range rep.Keep {
		out.Content = append(out.Content, r.Content[i])
	}
	return &out
}
