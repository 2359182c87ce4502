package mcpbound

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// coreResult returns r as the core sees it.
func coreResult(r *mcp.CallToolResult) mcpcore.Result {
	return mcpcore.ResultOf(r.Content, content, r.StructuredContent, r.IsError)
}

// content returns a content item's kind and text.
func content(c mcp.Content) mcpcore.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		return mcpcore.Content{Kind: mcpcore.Text, Text: c.Text}
	case *mcp.EmbeddedResource:
		if c.Resource != nil && c.Resource.Text != "" {
			return mcpcore.Content{Kind: mcpcore.Text, Text: c.Resource.Text}
		}
	case *mcp.ImageContent:
		return mcpcore.Content{Kind: mcpcore.Image}
	}
	return mcpcore.Content{Kind: mcpcore.Other}
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
