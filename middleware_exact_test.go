package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// chunkCap is the capacity of the pooled chunk a whole body of n bytes
// (at most 64 KiB) is read into.
func chunkCap(n int64) int64 {
	c := int64(512)
	for c < n {
		c <<= 1
	}
	return c
}

// TestLengthFramedBodyChargesOneChunk: a whole identity body of a
// Content-Length request over HTTP/1 (net/http's own body, read with no
// decoder) is charged the capacity of the one chunk it is held in, no
// more, from before its first byte until the handler returns (4096 for
// 4096 bytes, 8192 for 4097, 64 KiB for 64 KiB): InUse inside the
// handler and Peak are that capacity, InUse is 0 after. At a decoded
// limit of n, n bytes pass byte-exact and n+1 (too many for the read with
// no decoder, so read by the decoder) are refused 413, stage decoded,
// observing n+1.
func TestLengthFramedBodyChargesOneChunk(t *testing.T) {
	t.Parallel()
	data := text(64 << 10)
	for _, n := range []int64{1, 512, 513, 4096, 4097, 64 << 10} {
		f := limits.NewInFlight(1 << 20)
		var inUse atomic.Int64
		s := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{InFlight: f,
			Budget: limits.Budget{MaxDecodedBytes: n, MaxWireBytes: 1 << 20}})(http.HandlerFunc(
			func(w http.ResponseWriter, r *http.Request) {
				inUse.Store(f.InUse())
				got, err := io.ReadAll(r.Body)
				fmt.Fprintf(w, "%d %v %v", len(got), bytes.Equal(got, data[:len(got)]), err)
			})))
		status, answer := post(t, s.URL, "", data[:n], false)
		if want := fmt.Sprintf("%d true <nil>", n); status != 200 || answer != want {
			t.Errorf("%d bytes at a limit of %d: %d %s, want 200 %s", n, n, status, answer, want)
		}
		waitInUse(t, f, fmt.Sprint(n, " bytes"))
		if got, want := inUse.Load(), chunkCap(n); got != want || f.Peak() != want {
			t.Errorf("%d bytes: InUse() = %d in the handler, Peak() = %d; want %d (the chunk's capacity)", n, got, f.Peak(), want)
		}
		if n < 64<<10 {
			status, answer = post(t, s.URL, "", data[:n+1], false)
			if p := problemOf(answer); status != 413 || p.Stage != "decoded" || p.Limit != n || p.Observed != n+1 {
				t.Errorf("%d bytes at a limit of %d: %d %s, want 413 decoded observing %d", n+1, n, status, answer, n+1)
			}
		}
		s.Close()
	}
}

// TestLengthFramedBodyCutShort: a client that sends fewer bytes than its
// Content-Length and closes (or half-closes) the connection never reaches
// the handler: the body is rejected as a breach of integrity that observed
// the bytes sent, reported to Observe (and answered 400 where the client
// still reads), and nothing stays charged.
func TestLengthFramedBodyCutShort(t *testing.T) {
	t.Parallel()
	for _, half := range []bool{false, true} {
		f := limits.NewInFlight(1 << 20)
		outcomes := make(chan boundhttp.Outcome, 4)
		var called atomic.Bool
		s := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{InFlight: f,
			Observe: func(o boundhttp.Outcome) { outcomes <- o }})(http.HandlerFunc(
			func(w http.ResponseWriter, r *http.Request) { called.Store(true) })))
		c, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n%s", text(1000))
		answer := ""
		if half {
			c.(*net.TCPConn).CloseWrite()
			line, _ := io.ReadAll(c)
			answer, _, _ = strings.Cut(string(line), "\r\n")
		}
		c.Close()
		select {
		case o := <-outcomes:
			if o.Kind != boundhttp.OutcomeRejected || o.Err == nil || o.Err.Stage != limits.StageIntegrity || o.Err.Observed != 1000 {
				t.Errorf("half-close %v: observed %s %+v, want rejected, integrity observing 1000", half, o.Kind, o.Err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("half-close %v: no outcome observed", half)
		}
		if half && answer != "HTTP/1.1 400 Bad Request" {
			t.Errorf("half-close: answered %q, want 400", answer)
		}
		waitInUse(t, f, fmt.Sprint("half-close ", half))
		s.Close()
		if called.Load() {
			t.Errorf("half-close %v: the handler was called", half)
		}
	}
}

// TestOnlyNetHTTPsOwnFramedBodyIsReadAsFramed: only net/http's own body
// of an HTTP/1 request framed by its Content-Length is read as framed by
// it (with no decoder, see lengthFramed); a request that expects "100
// Continue", a chunked one, one over HTTP/2 and one whose body an outer
// handler replaced (keeping ContentLength) take the decoder as before:
// each body arrives whole and byte-exact, and a replaced body longer than
// the ContentLength it kept is handed on whole, as the decoder hands on
// any identity body within the budget, where a read framed by the length
// would refuse it.
func TestOnlyNetHTTPsOwnFramedBodyIsReadAsFramed(t *testing.T) {
	t.Parallel()
	data := text(4096)
	var framed atomic.Value // of bool: lengthFramed of the request the Middleware got
	inner := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v %v", len(got), bytes.Equal(got, data[:min(len(got), len(data))]), err)
	}))
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/replaced":
			r2 := *r
			r2.Body = io.NopCloser(bytes.NewReader(data[:r.ContentLength]))
			r = &r2
		case "/replaced-longer":
			r2 := *r
			r2.Body = io.NopCloser(bytes.NewReader(data))
			r = &r2
		case "/limited":
			r2 := *r
			r2.Body = http.MaxBytesReader(w, r.Body, 1<<20)
			r = &r2
		}
		framed.Store(boundhttp.LengthFramed(r))
		inner.ServeHTTP(w, r)
	})
	h1 := httptest.NewServer(outer)
	defer h1.Close()
	h2 := httptest.NewUnstartedServer(outer)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	defer h2.Close()
	addr := h1.Listener.Addr().String()
	raw := func(head string, body []byte) func() (int, string) {
		return func() (int, string) { return rawExchange(t, addr, head+string(body)) }
	}
	expecting := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	defer expecting.CloseIdleConnections()
	do := func(c *http.Client, url string, body []byte, expect bool) func() (int, string) {
		return func() (int, string) {
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			if expect {
				req.Header.Set("Expect", "100-continue")
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, err.Error()
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.ProtoMajor != 2 && strings.HasPrefix(url, h2.URL) {
				return 0, "not over HTTP/2: " + resp.Proto
			}
			return resp.StatusCode, string(b)
		}
	}
	ok := fmt.Sprintf("%d true <nil>", len(data))
	for _, tt := range []struct {
		name   string
		send   func() (int, string)
		framed bool
		answer string
	}{
		{"HTTP/1.1 Content-Length", raw("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n", data), true, ok},
		{"HTTP/1.0 Content-Length", raw("POST / HTTP/1.0\r\nHost: x\r\nContent-Length: 4096\r\n\r\n", data), true, ok},
		{"Expect: 100-continue", do(expecting, h1.URL, data, true), false, ok},
		{"chunked", raw("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
			append(fmt.Appendf(nil, "%x\r\n", len(data)), string(data)+"\r\n0\r\n\r\n"...)), false, ok},
		{"HTTP/2", do(h2.Client(), h2.URL, data, false), false, ok},
		{"replaced, same length", raw("POST /replaced HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n", data), false, ok},
		{"replaced, longer than its ContentLength", raw("POST /replaced-longer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", data[:100]), false, ok},
		{"behind http.MaxBytesReader", raw("POST /limited HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n", data), false, ok},
	} {
		framed.Store(!tt.framed)
		status, answer := tt.send()
		if status != 200 || answer != tt.answer {
			t.Errorf("%s: %d %s, want 200 %s", tt.name, status, answer, tt.answer)
		}
		if got := framed.Load().(bool); got != tt.framed {
			t.Errorf("%s: read as framed by its length %v, want %v", tt.name, got, tt.framed)
		}
	}
}
