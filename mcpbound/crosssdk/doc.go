// Package crosssdk holds tests only: the MCP output caps across the two
// SDKs they adapt, the official Go SDK (module mcpbound) and
// mark3labs/mcp-go (module mcpbound/mcpgo). A server on one SDK is called
// by clients on the other and by the official TypeScript client; links one
// server mints are read by every client and, through a shared Redis, by an
// instance on the other SDK; one table runs the marker, page and spill
// behaviour against both adapters and shows it identical, naming the
// documented differences where mcp-go gives an adapter no say.
//
// It is a module of its own so that neither adapter depends on the other
// SDK.
package crosssdk
