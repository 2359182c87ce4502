// Package mcptest tests the boundprobe command against an MCP server from
// the official Go SDK, behind nginx and boundhttp's Middleware. It is its
// own module so that the root module does not depend on the SDK.
package mcptest
