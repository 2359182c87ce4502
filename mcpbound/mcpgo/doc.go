// Package mcpgo caps what MCP tools return for servers and clients built on
// github.com/mark3labs/mcp-go, with the same core as package mcpbound for
// the official Go SDK (github.com/boundhttp/boundhttp/mcpcore): the same
// marker, the same rule for structured content, the same stores, links and
// pages, the same client ceilings.
//
// On the server, one option caps every tool result and serves the pages of
// kept results through resources/read:
//
//	srv := server.NewMCPServer("name", "1.0.0",
//		mcpgo.ServerLimits{MaxResultChars: 20000, Store: mcpcore.NewStore(0, 0)}.Option())
//
// On the client, a wrapped transport applies the client ceilings, and tools
// are called as before:
//
//	tr, err := transport.NewStreamableHTTP(url)
//	...
//	c := client.NewClient(mcpgo.ClientLimits{SpillDir: dir}.Transport(tr))
//
// Where mcp-go gives a resource handler no say, pages differ from the
// official SDK's in two ways: a page's _meta (page, pages, next) is not on
// the resources/read result, only next on its navigation note's _meta
// (both [ReadLink] and mcpbound.ReadLink follow either), and a link that
// is unknown or expired is answered with the internal error (-32603) whose
// message says so, since mcp-go sends every resource handler error with
// that code; the message is the same.
//
// mcp-go v1.2.1 declares go 1.25.5, so this module does too; the rest of
// boundhttp builds with go 1.25.0.
package mcpgo
