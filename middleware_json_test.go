package boundhttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestJSONCheckNotSkippedByContentType pins the trap of letting the peer
// choose the mode: with JSONAlways a body is checked whatever Content-Type
// it declares or omits, and without it a malformed parameter does not hide
// application/json.
func TestJSONCheckNotSkippedByContentType(t *testing.T) {
	t.Parallel()
	const deep, shallow = `{"a":{"b":{"c":1}}}`, `{"a":1}`
	for _, streaming := range []bool{false, true} {
		always := echoServer(t, boundhttp.MiddlewareConfig{JSON: &limits.JSON{MaxDepth: 2}, JSONAlways: true, Streaming: streaming})
		byType := echoServer(t, boundhttp.MiddlewareConfig{JSON: &limits.JSON{MaxDepth: 2}, Streaming: streaming})
		defaults := echoServer(t, boundhttp.MiddlewareConfig{JSONAlways: true, Streaming: streaming})
		for _, tt := range []struct {
			name        string
			url         string
			contentType string // "-" for none
			body        string
			status      int
		}{
			{"always, no Content-Type, too deep", always.URL, "-", deep, 413},
			{"always, text/plain, too deep", always.URL, "text/plain", deep, 413},
			{"always, application/json; charset, too deep", always.URL, "application/json; charset", deep, 413},
			{"always, application/json, too deep", always.URL, "application/json", deep, 413},
			{"always, text/plain, shallow", always.URL, "text/plain", shallow, 200},
			{"always, no Content-Type, not JSON", always.URL, "-", "hello", 400},
			{"by type, application/json; charset, too deep", byType.URL, "application/json; charset", deep, 413},
			{"by type, text/plain, too deep (not declared JSON)", byType.URL, "text/plain", deep, 200},
			{"by type, text/plain, not JSON", byType.URL, "text/plain", "hello", 200},
			{"always with default limits, not JSON", defaults.URL, "-", "hello", 400},
			{"always with default limits, shallow", defaults.URL, "-", shallow, 200},
		} {
			req, _ := http.NewRequest("POST", tt.url, strings.NewReader(tt.body))
			if tt.contentType != "-" {
				req.Header.Set("Content-Type", tt.contentType)
			} else {
				req.Header["Content-Type"] = nil
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("streaming %v, %s: status %d (%s), want %d", streaming, tt.name, resp.StatusCode, answer, tt.status)
			}
		}
	}
}
