package mcpgo

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// rewrite returns r rewritten as rep says, or r itself when rep is nil. r
// is not modified.
func rewrite(r *mcp.CallToolResult, rep *mcpcore.Replacement) *mcp.CallToolResult {
	if rep == nil {
		return r
	}
	out := *r
	out.StructuredContent = nil
	out.RawStructuredContent = nil
	out.IsError = rep.IsError
	out.Content = make([]mcp.Content, 0, 2+len(rep.Keep))
	out.Content = append(out.Content, mcp.NewTextContent(rep.Text))
	if l := rep.Link; l != nil {
		link := mcp.NewResourceLink(l.URI, l.Name, l.Description, l.MIMEType)
		size := l.Size
		link.Size = &size
		out.Content = append(out.Content, link)
	}
	for _, i := range rep.Keep {
		out.Content = append(out.Content, r.Content[i])
	}
	return &out
}

// embedded returns an embedded resource as the core sees it: text if it
// has text.
func embedded(rc mcp.ResourceContents) mcpcore.Content {
	var text string
	switch rc := rc.(type) {
	case mcp.TextResourceContents:
		text = rc.Text
	case *mcp.TextResourceContents:
		text = rc.Text
	}
	if text == "" {
		return mcpcore.Content{Kind: mcpcore.Other}
	}
	return mcpcore.Content{Kind: mcpcore.Text, Text: text}
}

// coreResult returns r as the core sees it.
func coreResult(r *mcp.CallToolResult) mcpcore.Result {
	return mcpcore.ResultOf(r.Content, content, r.StructuredContent, r.IsError)
}

// content returns a content item's kind and text. mcp-go's items are
// values or pointers, as a handler built them.
func content(c mcp.Content) mcpcore.Content {
	switch c := c.(type) {
	case mcp.TextContent:
		return mcpcore.Content{Kind: mcpcore.Text, Text: c.Text}
	case *mcp.TextContent:
		return mcpcore.Content{Kind: mcpcore.Text, Text: c.Text}
	case mcp.EmbeddedResource:
		return embedded(c.Resource)
	case *mcp.EmbeddedResource:
		return embedded(c.Resource)
	case mcp.ImageContent, *mcp.ImageContent:
		return mcpcore.Content{Kind: mcpcore.Image}
	}
	return mcpcore.Content{Kind: mcpcore.Other}
}
