// Package mcpcore is the part of boundhttp's MCP tool-output caps that no
// MCP SDK shapes: counting characters, cutting with the marker (head, or
// head and tail), keeping whole results in a [ResultStore] and serving them
// in pages with navigation notes, the client ceilings (warn and max tokens,
// character ceilings and the tools' own, saving to a private folder, error
// trimming), and list paging ([Pager]).
//
// Two adapters apply it and only translate results and requests: module
// github.com/boundhttp/boundhttp/mcpbound for the official MCP Go SDK,
// github.com/boundhttp/boundhttp/mcpbound/mcpgo for mark3labs/mcp-go. A
// store written for one (redisstore, or your own [ResultStore]) serves
// both, and a link minted by a server on one SDK reads on the other.
// Another SDK's adapter describes a result as a [Result], calls
// [Server.Cap] or [Client.Apply], and rewrites the result as the
// [Replacement] says.
//
// The package is in the root module and imports no MCP SDK. Its error
// texts begin "mcpbound:", as they did when they lived in package
// mcpbound: error text is part of the API.
//
// Units: characters are Unicode code points (what utf8.RuneCountInString
// counts), never bytes; cuts fall between code points. Bytes are UTF-8
// bytes. Tokens are whatever ClientLimits.Tokens counts, by default an
// estimate of one token per four characters. Nothing is cut silently.
package mcpcore
