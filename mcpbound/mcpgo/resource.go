package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// resultTemplate is the URI template of kept results' pages: the first
// page is ResultURIPrefix and the id, the following ones add "?page=K".
const resultTemplate = mcpcore.ResultURIPrefix + "{id}{?page}"

// Resources returns the resource template that serves, through
// resources/read, the pages of the results the limits keep in their Store
// (links minted by any server sharing the store, whatever its SDK), for
// MCPServer.AddResourceTemplates; [ServerLimits.Option] adds it. It panics
// if [ServerLimits.Validate] reports an error.
func (l ServerLimits) Resources() server.ServerResourceTemplate { return resources(l.core()) }

// resources returns the template of s's pages.
func resources(s *mcpcore.Server) server.ServerResourceTemplate {
	return server.ServerResourceTemplate{
		Template: mcp.NewResourceTemplate(resultTemplate, "tool-result-pages",
			mcp.WithTemplateDescription("pages of tool results too large to send whole; read the links tool results give, each page names the next")),
		Handler: func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return readResult(ctx, s, req.Params.URI)
		},
	}
}

// readResult answers resources/read for uri: the page's data, then its
// navigation note, whose _meta names the next page unless it is the last.
// An unknown or expired link is an error whose message says which.
func readResult(ctx context.Context, s *mcpcore.Server, uri string) ([]mcp.ResourceContents, error) {
	p, err := s.Read(ctx, uri)
	if err != nil {
		return nil, err
	}
	nav := map[string]any{mcpcore.NavigationKey: true}
	if p.Next != "" {
		nav[mcpcore.NextKey] = p.Next
	}
	return []mcp.ResourceContents{
		mcp.TextResourceContents{URI: p.URI, MIMEType: p.MIMEType, Text: p.Data},
		mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: p.Note, Meta: nav},
	}, nil
}
