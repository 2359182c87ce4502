package boundhttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestStreamingReadDeadlineOutlivesBody: in streaming mode Budget.Timeout
// is a read deadline on the connection. A handler that decodes its JSON
// and stops reading before io.EOF (json.Decoder does) must not have the
// deadline fire later: net/http's background read, started when the wire
// body ended, would fail with it and cancel the request's context in the
// middle of a response that has nothing left to read.
func TestStreamingReadDeadlineOutlivesBody(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: timeout}, Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var v map[string]any
		if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-r.Context().Done():
		case <-time.After(4 * timeout):
		}
		fmt.Fprintf(w, "context: %v", r.Context().Err())
	})))
	t.Cleanup(s.Close)
	data := encode("gzip", []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`))
	req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(data))
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(answer) != "context: <nil>" {
		t.Errorf("handler done reading, working past Timeout: %d %q, want 200 %q", resp.StatusCode, answer, "context: <nil>")
	}
}
