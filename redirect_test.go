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

// TestTransportRedirectBodyBounded: http.Client reads up to 2 KiB of a
// redirect's body before following it; a bomb in that body costs at most
// one decode within the budget (the body is verified lazily, on that read),
// never more, and the redirect is still followed.
func TestTransportRedirectBodyBounded(t *testing.T) {
	t.Parallel()
	size := 8 << 20 // 8 MiB decoded, several hundred KiB on the wire
	if testing.Short() {
		size = 2 << 20 // still twice the limit
	}
	bomb := encode("gzip", text(size))
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/final")
		serve(w, body{coding: "gzip", data: bomb, status: http.StatusFound})
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "final") })
	s := httptest.NewServer(mux)
	defer s.Close()
	ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), read: map[string]int64{}}
	ct.base.(*http.Transport).DisableCompression = true
	const limit = 1 << 20
	tr := &boundhttp.Transport{Base: ct, Budget: limits.Budget{MaxDecodedBytes: limit}}
	resp, got, err := get(t, tr, s.URL+"/redirect")
	if err != nil || string(got) != "final" {
		t.Fatalf("GET /redirect = %q, %v; want the final body", got, err)
	}
	if n := ct.read["/redirect"]; n >= int64(len(bomb)) {
		t.Errorf("redirect body: %d wire bytes read, want a read bounded by the budget (< %d)", n, len(bomb))
	}
	if u, done := boundhttp.UsageOf(resp.Request.Response); done || u.DecodedBytes > limit+1 {
		t.Errorf("redirect body usage %v, verified %v; want at most %d decoded bytes and a rejection", u, done, limit+1)
	}
	// A caller who stops at the redirect reads its body under the budget.
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = c.Get(s.URL + "/redirect")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if stageOf(err) != "decoded" || len(data) > 0 {
		t.Errorf("reading the redirect's bomb body: %d bytes, %v; want stage decoded and no bytes", len(data), err)
	}
}

// TestReadBodyLazyRedirect: a redirect kept with http.ErrUseLastResponse
// is read whole through ReadBody; its JSON rejection is an error with no
// bytes.
func TestReadBodyLazyRedirect(t *testing.T) {
	t.Parallel()
	good := []byte(`{"a":[1,2,3]}`)
	deep := bytes.Repeat([]byte("["), 100)
	for _, tt := range []struct {
		name string
		data []byte
		ok   bool
	}{{"valid", good, true}, {"rejected", deep, false}} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/elsewhere")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusFound)
			w.Write(tt.data)
		}))
		tr := &boundhttp.Transport{JSON: &limits.JSON{MaxDepth: 10}}
		c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, err := boundhttp.ReadBody(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		s.Close()
		if tt.ok && (err != nil || !bytes.Equal(got, good)) || !tt.ok && (err == nil || len(got) != 0) {
			t.Errorf("%s: ReadBody of a kept redirect = %q, %v", tt.name, got, err)
		}
	}
}
