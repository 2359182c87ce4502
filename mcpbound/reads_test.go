package mcpbound

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReadsCappedWhenAsked: a resource and a prompt of the server's own, of
// 300,000 characters each, reach the client whole by default, and cut to
// the cap with a marker naming what was cut when ServerLimits.Reads is set;
// a blob beside the resource's text passes. Sabotage: the middleware
// without capRead fails both rows with Reads set.
func TestReadsCappedWhenAsked(t *testing.T) {
	t.Parallel()
	const limit = 2000
	big := strings.Repeat("abcdefghij", 30000)
	for _, reads := range []bool{false, true} {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v1"}, nil)
		srv.AddResource(&mcp.Resource{URI: "file:///big.txt", Name: "big"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: "file:///big.txt", MIMEType: "text/plain", Text: big},
				{URI: "file:///big.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}},
			}}, nil
		})
		srv.AddPrompt(&mcp.Prompt{Name: "big"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: big}}}}, nil
		})
		ServerLimits{MaxResultChars: limit, Reads: reads}.Install(srv)
		cs := connectTo(t, srv)
		rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "file:///big.txt"})
		if err != nil {
			t.Fatal(err)
		}
		text, blobs := "", 0
		for _, c := range rr.Contents {
			if c.Blob != nil {
				blobs++
			} else {
				text += c.Text
			}
		}
		cut := chars(text) <= limit && strings.Contains(text, "the rest of this resource was cut")
		if cut != reads || blobs != 1 {
			t.Errorf("Reads %v: resources/read gave %d characters and %d blobs", reads, chars(text), blobs)
		}
		pr, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "big"})
		if err != nil {
			t.Fatal(err)
		}
		text = ""
		for _, m := range pr.Messages {
			if tc, ok := m.Content.(*mcp.TextContent); ok {
				text += tc.Text
			}
		}
		cut = chars(text) <= limit && strings.Contains(text, "the rest of this prompt was cut")
		if cut != reads {
			t.Errorf("Reads %v: prompts/get gave %d characters", reads, chars(text))
		}
	}
}
