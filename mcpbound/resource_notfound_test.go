package mcpbound

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestResourceNotFoundWireError: a link that names no kept result is answered
// with the JSON-RPC error the MCP specification gives a missing resource,
// code -32602 with the URI in its data, not the SDK's former -32002.
// Sabotage: code -32002 in notFound -> this test failed.
func TestResourceNotFoundWireError(t *testing.T) {
	mw := ServerLimits{MaxResultChars: 1000, Store: NewStore(1<<20, time.Minute)}.Middleware()
	for _, uri := range []string{
		ResultURIPrefix + strings.Repeat("f", 32), // well formed, never kept
		ResultURIPrefix + "x",                     // malformed id
		ResultURIPrefix + strings.Repeat("f", 32) + "?page=0",
	} {
		_, err := readPage(mw, uri)
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			t.Fatalf("read %s: err = %v (%T), want a *jsonrpc.Error", uri, err, err)
		}
		if got, want := je.Code, int64(-32602); got != want {
			t.Errorf("read %s: code = %d, want %d", uri, got, want)
		}
		var data struct{ URI string }
		if err := json.Unmarshal(je.Data, &data); err != nil || data.URI != uri {
			t.Errorf("read %s: data = %s (%v), want the uri", uri, je.Data, err)
		}
		if !strings.HasPrefix(je.Message, "Resource not found: ") {
			t.Errorf("read %s: message = %q", uri, je.Message)
		}
	}
}
