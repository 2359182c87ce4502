package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestTransportInFlightPaths: the Transport's paths that no other test
// walks with an InFlight give back everything: HEAD, 204, 304, a redirect
// (whose body http.Client reads a little of and closes), a JSON shape
// breach, a Content-Length over the limit (refused before the body is
// read), Fetch, Preview, and streaming bodies closed unread or early.
func TestTransportInFlightPaths(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(512<<10))
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/redirect":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Location", "/gz")
			w.WriteHeader(http.StatusFound)
			w.Write(gz)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, deep)
		case "/big":
			w.Header().Set("Content-Length", "100000000")
			w.Write(text(1 << 10))
		default:
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
		}
	}))
	defer s.Close()
	f := limits.NewInFlight(16 << 20)
	b := limits.Budget{MaxDecodedBytes: 1 << 20}
	whole := &boundhttp.Transport{Budget: b, InFlight: f, JSON: &limits.JSON{MaxDepth: 10}}
	stream := &boundhttp.Transport{Budget: b, InFlight: f, Streaming: true}
	defer whole.CloseIdleConnections()
	defer stream.CloseIdleConnections()
	wc, sc := &http.Client{Transport: whole}, &http.Client{Transport: stream}
	check := func(what string) {
		t.Helper()
		if f.InUse() != 0 || f.Peak() > f.Cap() {
			t.Fatalf("%s: InUse() = %d, Peak() = %d, want 0 and within %d", what, f.InUse(), f.Peak(), f.Cap())
		}
	}
	do := func(c *http.Client, method, path string) *http.Response {
		req, _ := http.NewRequest(method, s.URL+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			return nil
		}
		return resp
	}
	for _, c := range []*http.Client{wc, sc} {
		for _, tt := range []struct{ method, path string }{
			{"HEAD", "/gz"}, {"GET", "/204"}, {"GET", "/304"}, {"GET", "/redirect"}, {"GET", "/json"}, {"GET", "/big"},
		} {
			if resp := do(c, tt.method, tt.path); resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			check(tt.method + " " + tt.path)
		}
	}
	if resp := do(wc, "GET", "/gz"); resp == nil || f.InUse() < 512<<10 {
		t.Fatalf("a whole gzip body: InUse() = %d while held, want at least its size", f.InUse())
	} else {
		resp.Body.Close()
	}
	check("whole body closed unread")
	if resp := do(sc, "GET", "/gz"); resp != nil {
		resp.Body.Close()
	}
	check("streaming body closed unread")
	if resp := do(sc, "GET", "/gz"); resp != nil {
		io.CopyN(io.Discard, resp.Body, 1000)
		if f.InUse() < 64<<10 {
			t.Errorf("streaming gzip body being read: InUse() = %d, want its decoder's state", f.InUse())
		}
		resp.Body.Close()
	}
	check("streaming body closed early")
	req, _ := http.NewRequest("GET", s.URL+"/gz", nil)
	if r := boundhttp.Fetch(wc, req); r.Status != boundhttp.StatusComplete {
		t.Errorf("Fetch: %+v", r.Status)
	}
	check("Fetch")
	req, _ = http.NewRequest("GET", s.URL+"/gz", nil)
	if r := boundhttp.Preview(wc, req, 100); r.Status != boundhttp.StatusPreview {
		t.Errorf("Preview: %+v", r.Status)
	}
	check("Preview")
	if f.Peak() == 0 {
		t.Fatal("Peak() = 0: nothing was charged")
	}
}
