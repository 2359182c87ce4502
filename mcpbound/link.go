package mcpbound

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadLink reads the resource uri through resources/read and follows each
// page's _meta.next (see [NextKey]) to the last page, returning the pages'
// data joined (the navigation notes, see [NavigationKey], left out). It reads at most maxPages pages and at most maxChars
// characters in all, and fails rather than return a prefix as the whole:
// a loop of links or a longer result is an error. Both bounds must be
// positive.
func ReadLink(ctx context.Context, cs *mcp.ClientSession, uri string, maxPages, maxChars int) (string, error) {
	if maxPages <= 0 || maxChars <= 0 {
		return "", fmt.Errorf("mcpbound: ReadLink(%d pages, %d characters): bounds must be positive", maxPages, maxChars)
	}
	var b strings.Builder
	n := 0
	for page := 1; page <= maxPages; page++ {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		for _, c := range res.Contents {
			if nav, _ := c.Meta[NavigationKey].(bool); nav {
				continue
			}
			n += chars(c.Text)
			if n > maxChars {
				return "", fmt.Errorf("mcpbound: resource %s: more than %d characters", uri, maxChars)
			}
			b.WriteString(c.Text)
		}
		next, _ := res.Meta[NextKey].(string)
		if next == "" {
			return b.String(), nil
		}
		uri = next
	}
	return "", fmt.Errorf("mcpbound: resource has more than %d pages", maxPages)
}
