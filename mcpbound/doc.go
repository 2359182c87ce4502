// Package mcpbound caps what MCP tools return, for the official MCP Go SDK
// (github.com/modelcontextprotocol/go-sdk), on both sides of a session.
//
// On the server, [ServerLimits] is one receiving middleware that caps every
// tools/call result (a per-tool guard is a guard somebody forgets to add to
// the fifty-seventh tool): a cut result says so with a marker beginning
// "[truncated: showing N of M characters", and with a [Store] a large result
// is kept and handed by resource_link, read page by page through
// resources/read. [Pager] gives list tools a bounded limit argument and an
// opaque cursor.
//
// On the client, [ClientLimits] is one sending middleware that applies the
// ceilings real MCP clients document (Claude Code's): a warning above
// 10,000 tokens, results over 25,000 tokens or 50,000 characters saved to a
// file and replaced by a note naming it, error texts over 11,000 characters
// trimmed to their ends. [ReadLink] follows a resource_link to the end.
//
// What is SDK-agnostic (counting, cutting, stores, pages, ceilings,
// spilling) lives in package github.com/boundhttp/boundhttp/mcpcore, which
// the adapter for mark3labs/mcp-go (module mcpbound/mcpgo) shares: the
// types and names that moved there keep working here as aliases.
//
// Units: characters are Unicode code points (what utf8.RuneCountInString
// counts), never bytes; cuts fall between code points. Bytes are UTF-8
// bytes. Tokens are whatever ClientLimits.Tokens counts, by default an
// estimate of one token per four characters. Nothing is cut silently.
package mcpbound
