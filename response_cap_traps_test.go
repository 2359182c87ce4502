package boundhttp_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// trapServer serves h behind a response cap of limit over HTTP/1.1, logging
// to rec.
func trapServer(t *testing.T, limit int64, h http.HandlerFunc, rec *logRecorder) *httptest.Server {
	t.Helper()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: limit, Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(h))
	t.Cleanup(s.Close)
	return s
}

// TestResponseCap204WithBody: writes to a 204 or 304 are not body bytes
// (net/http refuses them with ErrBodyNotAllowed), so they are not charged:
// a handler that writes more than the cap after WriteHeader(204) still
// sends a clean 204, not an aborted response.
func TestResponseCap204WithBody(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusNoContent, http.StatusNotModified} {
		rec := &logRecorder{}
		werr := make(chan error, 1)
		s := trapServer(t, 10, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(code)
			_, err := w.Write([]byte(strings.Repeat("x", 100)))
			werr <- err
		}, rec)
		resp, body, err := get(t, s.Client().Transport, s.URL)
		if got := <-werr; got != http.ErrBodyNotAllowed {
			t.Errorf("%d: the handler's write returned %v, want http.ErrBodyNotAllowed", code, got)
		}
		if err != nil || resp.StatusCode != code || len(body) != 0 {
			t.Errorf("%d with a 100-byte write, cap 10: %v, %v, %q; want a clean %d", code, err, resp, body, code)
		}
	}
}
