package mcpbound

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// readResult answers resources/read for uri from the core's store: one page
// and its navigation note, with _meta.next naming the following page
// unless it is the last. An unknown or expired link is a
// resource-not-found error whose message says which; a store that fails
// otherwise (unreachable) is an internal error that says so.
func readResult(ctx context.Context, s *mcpcore.Server, uri string) (*mcp.ReadResourceResult, error) {
	p, err := s.Read(ctx, uri)
	if err != nil {
		return nil, wireError(err)
	}
	nav := mcp.Meta{NavigationKey: true}
	meta := mcp.Meta{"page": p.Page, "pages": p.Pages}
	if p.Next != "" {
		nav[NextKey] = p.Next
		meta[NextKey] = p.Next
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: p.URI, MIMEType: p.MIMEType, Text: p.Data},
		{URI: p.URI, MIMEType: "text/plain", Text: p.Note, Meta: nav},
	}}
	res.CacheScope = "private" // TTLMs 0: stale at once, never served from a cache
	res.Meta = meta
	return res, nil
}

// wireError returns the JSON-RPC error of a core read error: a resource
// that does not exist is code -32602 (invalid params), the code the MCP
// specification gives it, with the URI in its data as {"uri": ...}; the
// code is the constant, not the SDK's deprecated variable, so the SDK's
// MCPGODEBUG switch back to -32002 does not change what this server
// answers. A store that failed is an internal error.
func wireError(err error) error {
	var re *mcpcore.ReadError
	if !errors.As(err, &re) {
		return err
	}
	if !re.NotFound {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: re.Message}
	}
	data, _ := json.Marshal(map[string]string{"uri": re.URI})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: re.Message, Data: data}
}
