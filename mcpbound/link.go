package mcpbound

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ReadLink reads the resource uri through resources/read and follows each
// page's _meta.next (see [NextKey]) to the last page, returning the pages'
// data joined (the navigation notes, see [NavigationKey], left out). It
// reads at most maxPages pages and at most maxChars characters in all, and
// fails rather than return a prefix as the whole: a loop of links or a
// longer result is an error. Both bounds must be positive. It reads links
// minted by either adapter ([mcpcore.FollowLink]).
func ReadLink(ctx context.Context, cs *mcp.ClientSession, uri string, maxPages, maxChars int) (string, error) {
	return mcpcore.FollowLink(ctx, uri, maxPages, maxChars, func(ctx context.Context, uri string) ([]string, string, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, "", err
		}
		var data []string
		next, _ := res.Meta[NextKey].(string)
		for _, c := range res.Contents {
			if nav, _ := c.Meta[NavigationKey].(bool); nav {
				if n, _ := c.Meta[NextKey].(string); next == "" {
					next = n
				}
				continue
			}
			data = append(data, c.Text)
		}
		return data, next, nil
	})
}
