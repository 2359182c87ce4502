package mcpbound

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// TestInstallAdvertisesTheLinks pins the trap "a link no careful client
// follows": the Middleware serves the pages of kept results by intercepting
// resources/read, but a server that declared no resources capability (the
// README's snippet did not) is never read by a client that checks
// capabilities, and resources/templates/list did not name the links'
// template. Install, one call on a server created with no options, adds the
// middleware and registers the template: the server advertises resources,
// lists the template, and a client that reads only what the capabilities
// allow follows a link to the whole result. Sabotage: Install adding the
// middleware alone fails the capability and the listing.
func TestInstallAdvertisesTheLinks(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v1"}, nil)
	whole := strings.Repeat("0123456789", 3000)
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult(whole), nil
	})
	ServerLimits{MaxResultChars: 2000, Store: mcpcore.NewStore(0, 0)}.Install(srv)
	cs := connectTo(t, srv)
	caps := cs.InitializeResult().Capabilities
	if caps == nil || caps.Resources == nil {
		t.Fatalf("the server does not advertise resources: %+v", caps)
	}
	tl, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tl.ResourceTemplates) != 1 || !strings.HasPrefix(tl.ResourceTemplates[0].URITemplate, mcpcore.ResultURIPrefix) {
		t.Fatalf("resources/templates/list = %+v, %v; want the result links' template", tl, err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var link string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l.URI
		}
	}
	if link == "" {
		t.Fatalf("no link in a result of %d characters over a cap of 2000", len(whole))
	}
	got, err := ReadLink(context.Background(), cs, link, 100, 1<<20)
	if err != nil || got != whole {
		t.Errorf("ReadLink = %d characters, %v; want the whole result", len(got), err)
	}
}
