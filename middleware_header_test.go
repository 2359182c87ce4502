package boundhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
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

// TestMiddlewareHandlerHeaderStaleLength: an identity body whose
// ContentLength is right but whose Content-Length header says otherwise (an
// outer handler replaced the body and set ContentLength only, or a client
// wrote "005") must not share that header: the handler sees the decoded
// length in both, and the caller's header stays as it was.
func TestMiddlewareHandlerHeaderStaleLength(t *testing.T) {
	t.Parallel()
	for _, stale := range [][]string{{"7"}, {"005"}, {"5", "5"}} {
		var got string
		h := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = fmt.Sprintf("%d %q", r.ContentLength, r.Header["Content-Length"])
		}))
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("hello"))
		r.Header["Content-Length"] = stale
		before := fmt.Sprint(r.Header)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if want := fmt.Sprintf("%d %q", 5, []string{"5"}); got != want {
			t.Errorf("header Content-Length %q: handler saw ContentLength, Content-Length %s; want %s", stale, got, want)
		}
		if after := fmt.Sprint(r.Header); after != before {
			t.Errorf("header Content-Length %q: the caller's header changed from %s to %s", stale, before, after)
		}
	}
}
