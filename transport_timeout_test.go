package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// slowBody returns its bytes and io.EOF in one Read that blocks for delay
// first and does not watch any context: a source that only the clock can
// judge.
type slowBody struct {
	data  []byte
	delay time.Duration
	done  bool
}

func (s *slowBody) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	time.Sleep(s.delay)
	s.done = true
	return copy(p, s.data), io.EOF
}

func (s *slowBody) Close() error { return nil }

// TestTimeoutRunsFromHeaders pins where Budget.Timeout starts on the
// client: at the response headers, so a server that sends its headers and
// then waits before the first body byte is cut off; and a body whose end
// arrives after the deadline is rejected even when its source ignored the
// cancellation.
func TestTimeoutRunsFromHeaders(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(600 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "hello")
	}))
	defer s.Close()
	for _, streaming := range []bool{false, true} {
		tr := &boundhttp.Transport{Streaming: streaming, Budget: limits.Budget{Timeout: 200 * time.Millisecond}}
		if _, _, err := get(t, tr, s.URL); stageOf(err) != "timeout" {
			t.Errorf("headers, then 600 ms before the first byte (streaming %v), timeout 200 ms: %v, want stage timeout", streaming, err)
		}
	}
	// Sources that ignore the cancellation: only the clock can judge them.
	data := []byte("a body that ended too late")
	for _, tt := range []struct {
		streaming bool
		delay     time.Duration // inside the source's only Read
		wait      time.Duration // the caller's, before the first Read
	}{
		{false, 400 * time.Millisecond, 0},
		{true, 400 * time.Millisecond, 0},
		// The decoder's own clock starts at its first Read; the Transport's
		// at the headers.
		{true, 0, 400 * time.Millisecond},
	} {
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(data)),
				Body: &slowBody{data: data, delay: tt.delay}}, nil
		})
		tr := &boundhttp.Transport{Base: base, Streaming: tt.streaming, Budget: limits.Budget{Timeout: 100 * time.Millisecond}}
		resp, err := (&http.Client{Transport: tr}).Get("http://example.invalid/")
		var got []byte
		if err == nil {
			time.Sleep(tt.wait)
			got, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if stageOf(err) != "timeout" || bytes.Equal(got, data) && !tt.streaming {
			t.Errorf("body ending %v after the headers (streaming %v, first Read after %v), timeout 100 ms: %q, %v; want stage timeout",
				tt.delay+tt.wait, tt.streaming, tt.wait, got, err)
		}
	}
}
