package mcpgo

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// TestReadsCappedWhenWrapped: a resource and a prompt of 300,000
// characters reach the client whole unless their handlers are wrapped with
// ServerLimits.Resource and Prompt, which cut them to the cap with a marker
// naming what was cut; a blob beside the resource's text passes. Sabotage:
// Resource returning h fails the resource row; Prompt returning h the
// prompt row.
func TestReadsCappedWhenWrapped(t *testing.T) {
	const limit = 2000
	big := mixed(300000)
	l := ServerLimits{MaxResultChars: limit}
	for _, wrapped := range []bool{false, true} {
		s := server.NewMCPServer("reads", "1.0.0", server.WithResourceCapabilities(false, false), server.WithPromptCapabilities(false))
		res := server.ResourceHandlerFunc(func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{
				mcp.TextResourceContents{URI: "file:///big.txt", MIMEType: "text/plain", Text: big},
				mcp.BlobResourceContents{URI: "file:///big.bin", MIMEType: "application/octet-stream", Blob: "AAEC"},
			}, nil
		})
		prompt := server.PromptHandlerFunc(func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("big", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(big))}), nil
		})
		if wrapped {
			res, prompt = l.Resource(res), l.Prompt(prompt)
		}
		s.AddResource(mcp.NewResource("file:///big.txt", "big"), res)
		s.AddPrompt(mcp.NewPrompt("big"), prompt)
		c := connect(t, serve(t, s), nil)
		rr := mcp.ReadResourceRequest{}
		rr.Params.URI = "file:///big.txt"
		got, err := c.ReadResource(context.Background(), rr)
		if err != nil {
			t.Fatal(err)
		}
		text, blobs := "", 0
		for _, c := range got.Contents {
			switch c := c.(type) {
			case mcp.TextResourceContents:
				text += c.Text
			case mcp.BlobResourceContents:
				blobs++
			}
		}
		cut := chars(text) <= limit && strings.Contains(text, "the rest of this resource was cut")
		if cut != wrapped || blobs != 1 {
			t.Errorf("wrapped %v: resources/read gave %d characters and %d blobs", wrapped, chars(text), blobs)
		}
		pr := mcp.GetPromptRequest{}
		pr.Params.Name = "big"
		p, err := c.GetPrompt(context.Background(), pr)
		if err != nil {
			t.Fatal(err)
		}
		text = ""
		for _, m := range p.Messages {
			if tc, ok := m.Content.(mcp.TextContent); ok {
				text += tc.Text
			}
		}
		cut = chars(text) <= limit && strings.Contains(text, "the rest of this prompt was cut")
		if cut != wrapped {
			t.Errorf("wrapped %v: prompts/get gave %d characters", wrapped, chars(text))
		}
	}
}
