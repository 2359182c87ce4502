package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestNginxRelaysSDKBodyLimitBehindStreamingMiddleware pins the trap of
// the SDK's own body cap (StreamableHTTPOptions.MaxRequestBodyBytes, an
// http.MaxBytesReader) behind the streaming Middleware: the writer the SDK
// hands to MaxBytesReader is the Middleware's, so net/http never learns a
// limit was hit and closes with the body unread, which nginx's default
// proxy config turns into 502. Behind the Middleware the SDK's own 413
// must arrive as it does without it, at 1 MiB and 16 MiB.
func TestNginxRelaysSDKBodyLimitBehindStreamingMiddleware(t *testing.T) {
	t.Parallel()
	tries := 40
	if testing.Short() {
		tries = 4
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "limit", Version: "v1"}, nil)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true, MaxRequestBodyBytes: 256 << 10})
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20}, Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	alone := httptest.NewServer(sdk)
	defer alone.Close()
	behind := httptest.NewServer(mw(sdk))
	defer behind.Close()
	base := testenc.Nginx(t, "", fmt.Sprintf(`
		client_max_body_size 32m;
		location /alone/ { proxy_pass %s; }
		location /behind/ { proxy_pass %s; }`, alone.URL, behind.URL))
	// A JSON-RPC initialize request padded to 16 MiB in a string.
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", 16<<20) + `"}}`)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: time.Minute}
	defer c.CloseIdleConnections()
	var cells []testenc.SweepCell
	for _, path := range []string{"/alone/", "/behind/"} {
		for _, size := range []int{1 << 20, 16 << 20} {
			cells = append(cells, testenc.SweepCell{Name: fmt.Sprintf("%s %d MiB", path, size>>20), Want: 413,
				Send: func() (*http.Response, error) {
					req, _ := http.NewRequest("POST", base+path, bytes.NewReader(data[:size]))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					return c.Do(req)
				}})
		}
	}
	// The SDK's own 413, every time.
	testenc.StatusSweep(t, tries, cells)
}
