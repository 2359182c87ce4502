package boundhttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// TestUsageOfRejectedJSONStream (trap: a result that does not tell the
// truth): a streamed JSON body whose document is cut short, or too deep,
// where the body ends is rejected by the shape check on its last Read, but
// UsageOf kept reporting it as read to its verified end, because the body
// underneath the check had recorded its end before the check ran.
func TestUsageOfRejectedJSONStream(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"truncated": `{"a": [1, 2, `,
		"too deep":  `[[[[[[[[[[1]]]]]]]]]]`,
	}
	for name, doc := range docs {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, doc)
		}))
		tr := &boundhttp.Transport{Streaming: true, JSON: &limits.JSON{MaxDepth: 4}}
		resp, err := (&http.Client{Transport: tr}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		var le *limits.Error
		if !errors.As(err, &le) {
			t.Errorf("%s: ReadAll: %v; want a *limits.Error", name, err)
		}
		if _, done := boundhttp.UsageOf(resp); done {
			t.Errorf("%s: UsageOf reports a verified end for a body the JSON check rejected (%v)", name, err)
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
		s.Close()
	}
}

// TestUsageOfRejectedJSONKeptRedirect: the same for the body of a redirect
// kept with ErrUseLastResponse, verified whole on its first Read: the body
// reached its verified end, then the JSON check rejected it, and UsageOf
// kept reporting the verified end.
func TestUsageOfRejectedJSONKeptRedirect(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
		io.WriteString(w, `{"a": [1, 2, `)
	}))
	defer s.Close()
	tr := &boundhttp.Transport{JSON: &limits.JSON{MaxDepth: 4}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	var le *limits.Error
	if !errors.As(err, &le) {
		t.Errorf("ReadAll: %v; want a *limits.Error", err)
	}
	if _, done := boundhttp.UsageOf(resp); done {
		t.Errorf("UsageOf reports a verified end for a body the JSON check rejected (%v)", err)
	}
}

func TestTransportUsageOf(t *testing.T) {
	t.Parallel()
	data := text(70000)
	wire := encode("zstd", data)
	s := server(t, body{coding: "zstd", data: wire})
	want := limits.Usage{WireBytes: int64(len(wire)), DecodedBytes: int64(len(data))}
	for _, streaming := range []bool{false, true} {
		for _, timeout := range []time.Duration{0, time.Minute} { // Client.Timeout wraps the body
			c := &http.Client{Transport: &boundhttp.Transport{Streaming: streaming}, Timeout: timeout}
			resp, err := c.Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, done := boundhttp.UsageOf(resp); done != !streaming {
				t.Errorf("streaming %v: UsageOf before reading reports done %v", streaming, done)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
			if u, done := boundhttp.UsageOf(resp); !done || u != want {
				t.Errorf("streaming %v, client timeout %v: UsageOf = %v, %v; want %v, true", streaming, timeout, u, done, want)
			}
			if streaming && resp.ContentLength != -1 {
				t.Errorf("streaming: ContentLength = %d, want -1", resp.ContentLength)
			}
		}
	}
	// A foreign response with a body reports false; one without a body
	// reports zero and true, as every bodiless message does.
	if _, ok := boundhttp.UsageOf(&http.Response{Body: io.NopCloser(strings.NewReader("x"))}); ok {
		t.Errorf("UsageOf(foreign response with a body) reports ok")
	}
}
