package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestUsageOfMidStreamAndAfterEarlyClose pins the trap "usage recorded only
// at the end": in streaming mode UsageOf reports the bytes read so far at
// every moment, from any goroutine, and after an early Close what was read
// before it, never as verified.
func TestUsageOfMidStreamAndAfterEarlyClose(t *testing.T) {
	t.Parallel()
	const size, first = 500000, 200000
	for _, c := range codings {
		s := server(t, body{coding: c, data: encode(c, text(size)), chunked: true})
		resp, err := (&http.Client{Transport: &boundhttp.Transport{Streaming: true}}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		// Another goroutine watches the usage while this one reads.
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() {
			var last limits.Usage
			for i := 0; i < 1e6 && !stop.Load(); i++ {
				u, _ := boundhttp.UsageOf(resp)
				if u.DecodedBytes < last.DecodedBytes || u.WireBytes < last.WireBytes || u.DecodedBytes > first {
					t.Errorf("%s: UsageOf went from %v to %v while reading %d bytes", c, last, u, first)
					return
				}
				last = u
			}
		})
		n, err := io.ReadFull(resp.Body, make([]byte, first))
		stop.Store(true)
		wg.Wait()
		if err != nil || n != first {
			t.Fatalf("%s: read %d, %v", c, n, err)
		}
		u, done := boundhttp.UsageOf(resp)
		if u.DecodedBytes != first || u.WireBytes <= 0 || done {
			t.Errorf("%s: UsageOf after reading %d of %d bytes = %v, %v; want decoded %d, some wire bytes, not done", c, first, size, u, done, first)
		}
		resp.Body.Close()
		if after, done := boundhttp.UsageOf(resp); after != u || done {
			t.Errorf("%s: UsageOf after an early Close = %v, %v; want %v, false", c, after, done, u)
		}
	}
}

// TestUsageOfBodilessMessageAgreesOnBothSides pins the trap of two usage
// reports that disagree on the same fact: a GET handed on by the Middleware
// reported (0, false) while a 204 through the Transport reported (0, true).
// A message without a body reports zero and true on both sides, wherever it
// came from; a message with a body that neither the Middleware nor the
// Transport saw reports false.
func TestUsageOfBodilessMessageAgreesOnBothSides(t *testing.T) {
	t.Parallel()
	type report struct {
		u    limits.Usage
		done bool
	}
	var got report
	mw := boundhttp.Middleware(limits.Budget{})
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.u, got.done = boundhttp.UsageOf(r)
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/body":
			io.WriteString(w, "hello")
		}
	})
	s := httptest.NewServer(h)
	defer s.Close()
	bounded := httptest.NewServer(mw(h))
	defer bounded.Close()

	server := []struct {
		name, url, method, body string
		want                    report
	}{
		{"GET through the Middleware", bounded.URL, "GET", "", report{done: true}},
		{"POST of 0 bytes through the Middleware", bounded.URL, "POST", "", report{done: true}},
		{"POST of 5 bytes through the Middleware", bounded.URL, "POST", "hello", report{limits.Usage{WireBytes: 5, DecodedBytes: 5}, true}},
		{"GET without a Middleware", s.URL, "GET", "", report{done: true}},
		{"POST of 5 bytes without a Middleware", s.URL, "POST", "hello", report{}},
	}
	for _, tt := range server {
		got = report{u: limits.Usage{WireBytes: -1}}
		req, _ := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got != tt.want {
			t.Errorf("server, %s: UsageOf = %v, %v; want %v, %v", tt.name, got.u, got.done, tt.want.u, tt.want.done)
		}
	}

	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	client := []struct {
		name, method, path string
		rt                 http.RoundTripper
		want               report
	}{
		{"204 through the Transport", "GET", "/204", tr, report{done: true}},
		{"HEAD through the Transport", "HEAD", "/body", tr, report{done: true}},
		{"204 without a Transport", "GET", "/204", http.DefaultTransport, report{done: true}},
		{"200 with a body without a Transport", "GET", "/body", http.DefaultTransport, report{}},
	}
	for _, tt := range client {
		req, _ := http.NewRequest(tt.method, s.URL+tt.path, nil)
		resp, err := (&http.Client{Transport: tt.rt}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r report
		r.u, r.done = boundhttp.UsageOf(resp)
		resp.Body.Close()
		if r != tt.want {
			t.Errorf("client, %s: UsageOf = %v, %v; want %v, %v", tt.name, r.u, r.done, tt.want.u, tt.want.done)
		}
	}
	if u, done := boundhttp.UsageOf((*http.Response)(nil)); done || u != (limits.Usage{}) {
		t.Errorf("UsageOf(nil response) = %v, %v; want zero, false", u, done)
	}
	if u, done := boundhttp.UsageOf((*http.Request)(nil)); done || u != (limits.Usage{}) {
		t.Errorf("UsageOf(nil request) = %v, %v; want zero, false", u, done)
	}
}
