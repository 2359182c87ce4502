package mcpgo

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ReadLink reads the resource uri through resources/read and follows each
// page's next URI (the result's _meta.next, or its navigation note's) to
// the last page, returning the pages' data joined (the navigation notes
// left out), for links minted by a server on either SDK. It reads at most
// maxPages pages and at most maxChars characters in all, and fails rather
// than return a prefix as the whole. Both bounds must be positive.
func ReadLink(ctx context.Context, c *client.Client, uri string, maxPages, maxChars int) (string, error) {
	return mcpcore.FollowLink(ctx, uri, maxPages, maxChars, func(ctx context.Context, uri string) ([]string, string, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			return nil, "", err
		}
		var next string
		if res.Meta != nil {
			next, _ = res.Meta.AdditionalFields[mcpcore.NextKey].(string)
		}
		var data []string
		for _, rc := range res.Contents {
			tc, ok := rc.(mcp.TextResourceContents)
			if !ok {
				continue
			}
			if nav, _ := tc.Meta[mcpcore.NavigationKey].(bool); nav {
				if n, _ := tc.Meta[mcpcore.NextKey].(string); next == "" {
					next = n
				}
				continue
			}
			data = append(data, tc.Text)
		}
		return data, next, nil
	})
}
