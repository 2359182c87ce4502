package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
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
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, path := range []string{"/alone/", "/behind/"} {
		for _, size := range []int{1 << 20, 16 << 20} {
			for range tries {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					req, _ := http.NewRequest("POST", base+path, bytes.NewReader(data[:size]))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					key := "error"
					if resp, err := c.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						key = fmt.Sprint(resp.StatusCode)
					}
					mu.Lock()
					got[fmt.Sprintf("%-8s %2d MiB %s", path, size>>20, key)]++
					mu.Unlock()
				}()
			}
		}
	}
	wg.Wait()
	var lines []string
	bad := false
	for k, n := range got {
		if !strings.HasSuffix(k, " 413") {
			bad = true
		}
		lines = append(lines, fmt.Sprintf("%3d × %s", n, k))
	}
	sort.Strings(lines)
	if bad {
		t.Errorf("through nginx, want the SDK's own 413 every time:\n%s", strings.Join(lines, "\n"))
	} else {
		t.Logf("through nginx:\n%s", strings.Join(lines, "\n"))
	}
}
