package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHTTP2 runs the decoded boundary over HTTP/2 (TLS, loopback), where
// bodies arrive as DATA frames, on both sides.
func TestHTTP2(t *testing.T) {
	t.Parallel()
	const limit = 40000
	b := limits.Budget{MaxDecodedBytes: limit}
	var handlerGot []byte
	var proto string
	mw := boundhttp.Middleware(b)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				proto = r.Proto
				handlerGot, _ = io.ReadAll(r.Body)
			})).ServeHTTP(w, r)
			return
		}
		n := limit
		if r.URL.Path == "/over" {
			n++
		}
		serve(w, body{coding: "zstd", data: encode("zstd", text(n)), chunked: true})
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	defer s.Close()
	tr := &boundhttp.Transport{Base: s.Client().Transport, Budget: b}
	resp, got, err := get(t, tr, s.URL+"/at")
	if err != nil || !bytes.Equal(got, text(limit)) || resp.ProtoMajor != 2 {
		t.Fatalf("HTTP/2 GET at the limit: %d bytes, %v, proto %v; want %d bytes over HTTP/2", len(got), err, resp, limit)
	}
	if _, _, err := get(t, tr, s.URL+"/over"); stageOf(err) != "decoded" {
		t.Errorf("HTTP/2 GET one over: %v, want stage decoded", err)
	}
	for _, tt := range []struct {
		n      int
		status int
	}{{limit, 200}, {limit + 1, 413}} {
		handlerGot = nil
		req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(encode("br", text(tt.n))))
		req.Header.Set("Content-Encoding", "br")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || (tt.status == 200 && (len(handlerGot) != tt.n || proto != "HTTP/2.0")) {
			t.Errorf("HTTP/2 POST of %d: status %d, handler got %d bytes over %s; want %d", tt.n, resp.StatusCode, len(handlerGot), proto, tt.status)
		}
	}
}
