package boundhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestMiddlewareHandlerHeader: whatever the coding and framing, the handler
// sees the decoded length in ContentLength and in the Content-Length header
// and no Content-Encoding, and the caller's header is left as it arrived
// (an identity body with a Content-Length shares it, as with
// http.MaxBytesHandler; every other one gets a copy).
func TestMiddlewareHandlerHeader(t *testing.T) {
	t.Parallel()
	const size = 5000
	for _, coding := range []string{"identity", "gzip"} {
		for _, chunked := range []bool{false, true} {
			var got, before, after string
			h := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = fmt.Sprintf("%d %q %q", r.ContentLength, r.Header.Get("Content-Length"), r.Header.Get("Content-Encoding"))
			}))
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				before = fmt.Sprint(r.Header)
				h.ServeHTTP(w, r)
				after = fmt.Sprint(r.Header)
			}))
			post(t, s.URL, coding, encode(coding, text(size)), chunked)
			s.Close()
			if want := fmt.Sprintf("%d %q %q", size, strconv.Itoa(size), ""); got != want {
				t.Errorf("%s, chunked %v: handler saw ContentLength, Content-Length, Content-Encoding %s; want %s", coding, chunked, got, want)
			}
			if after != before {
				t.Errorf("%s, chunked %v: the caller's header changed from %s to %s", coding, chunked, before, after)
			}
		}
	}
}
