package mcpbound_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpbound"
)

// connect runs server and a client with the given sending middleware over
// in-memory transports.
func connect(server *mcp.Server, mws ...mcp.Middleware) *mcp.ClientSession {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(context.Background(), st, nil); err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	client.AddSendingMiddleware(mws...)
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	return cs
}

// bigServer has one tool, "big", that returns n letters x.
func bigServer(n int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "v1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}, nil
		})
	return s
}

// A server caps every tool result in one place; a cut says what it cut.
func ExampleServerLimits() {
	server := bigServer(100000)
	server.AddReceivingMiddleware(mcpbound.ServerLimits{MaxResultChars: 1000}.Middleware())
	cs := connect(server)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big"})
	if err != nil {
		log.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	marker := text[strings.Index(text, "[truncated"):]
	fmt.Println(len([]rune(text)) <= 1000, marker[:strings.Index(marker, ";")])
	// Output: true [truncated: showing 835 of 100000 characters
}

// With a Store, the full result is kept and linked; ReadLink follows the
// pages to the end.
func ExampleStore() {
	server := bigServer(100000)
	store := mcpbound.NewStore(64<<20, 10*time.Minute)
	mcpbound.ServerLimits{MaxResultChars: 20000, Store: store}.Install(server)
	cs := connect(server)
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big"})
	if err != nil {
		log.Fatal(err)
	}
	link := res.Content[1].(*mcp.ResourceLink)
	full, err := mcpbound.ReadLink(context.Background(), cs, link.URI, 10, 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(*link.Size, len(full), full == strings.Repeat("x", 100000))
	// Output: 100000 100000 true
}

// A client saves a result over its ceilings to a file and keeps a note.
func ExampleClientLimits() {
	dir, err := os.MkdirTemp("", "results")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cs := connect(bigServer(60000), mcpbound.ClientLimits{SpillDir: dir}.Middleware())
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big"})
	if err != nil {
		log.Fatal(err)
	}
	note := res.Content[0].(*mcp.TextContent).Text
	fmt.Println(strings.HasPrefix(note, "[saved: this tool result was saved to the file "+dir))
	fmt.Println(note[strings.Index(note, " (")+1:])
	// Output:
	// true
	// (60000 characters, 60000 bytes) because it is 60000 characters, over the limit of 50000 characters; read the file in parts instead of asking for it whole]
}
