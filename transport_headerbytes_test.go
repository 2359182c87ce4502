package boundhttp_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// TestResponseHeaderBytesDefault pins the trap of response headers outside
// every budget: the base transport of a zero Transport (and
// NewBaseTransport) refuses a response whose header is over
// DefaultMaxResponseHeaderBytes, net/http's default being 10 MiB, on
// HTTP/1.1 and HTTP/2, and passes one just under it. net/http counts the
// header in its own units (with slop on HTTP/1, 32 bytes per field on
// HTTP/2), hence the 8 KiB on either side.
func TestResponseHeaderBytesDefault(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("X-Big", strings.Repeat("a", n))
		w.Write([]byte("ok"))
	})
	h1 := httptest.NewServer(h)
	defer h1.Close()
	h2, h2base := h2TLSServer(t, h)
	for _, tt := range []struct {
		name string
		url  string
		tr   *boundhttp.Transport
	}{
		{"HTTP/1.1, zero Transport", h1.URL, &boundhttp.Transport{}},
		{"HTTP/2, NewBaseTransport", h2.URL, &boundhttp.Transport{Base: h2base}},
	} {
		for _, c := range []struct {
			n    int
			pass bool
		}{
			{boundhttp.DefaultMaxResponseHeaderBytes - 8<<10, true},
			{boundhttp.DefaultMaxResponseHeaderBytes + 8<<10, false},
			{10 << 20 / 2, false},
		} {
			resp, err := (&http.Client{Transport: tt.tr}).Get(tt.url + "/?n=" + strconv.Itoa(c.n))
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != c.pass {
				t.Errorf("%s, %d-byte header: %v, want pass %v", tt.name, c.n, err, c.pass)
			}
		}
	}
}
