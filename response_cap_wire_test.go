package boundhttp_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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

// TestResponseCapInvalidContentLength: a Content-Length net/http refuses
// (it logs it and drops the header) bounds nothing, so the bytes are held
// as if there were none: a breach before anything was sent is still a 500
// problem, not an aborted response.
func TestResponseCapInvalidContentLength(t *testing.T) {
	t.Parallel()
	for _, cl := range []string{"abc", "-1"} {
		s := trapServer(t, 100, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", cl)
			w.Write([]byte(strings.Repeat("x", 10)))
			w.Write([]byte(strings.Repeat("x", 200)))
		}, &logRecorder{})
		s.Config.ErrorLog = log.New(io.Discard, "", 0) // "invalid Content-Length"
		resp, body, err := get(t, s.Client().Transport, s.URL)
		if err != nil || resp.StatusCode != 500 {
			t.Errorf("Content-Length %q, 210 bytes over a cap of 100: %v, %v; want a 500 problem", cl, err, resp)
			continue
		}
		if p := problem(t, string(body)); p.Stage != "response" || p.Observed != 210 || p.Declared {
			t.Errorf("Content-Length %q: problem %+v, want stage response, observed 210, not declared", cl, p)
		}
	}
}

// TestResponseCap500NotCacheable: the 500 that replaces a response over
// the cap drops the freshness the handler meant for its own answer
// (Cache-Control, Expires), as net/http's serveError does, so that a
// shared cache does not keep the error for the handler's max-age.
func TestResponseCap500NotCacheable(t *testing.T) {
	t.Parallel()
	s := trapServer(t, 10, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("Expires", "Thu, 01 Dec 2099 16:00:00 GMT")
		w.Write([]byte(strings.Repeat("x", 100)))
	}, &logRecorder{})
	resp, _, err := get(t, s.Client().Transport, s.URL)
	if err != nil || resp.StatusCode != 500 {
		t.Fatalf("%v, %v; want a 500", err, resp)
	}
	for _, k := range []string{"Cache-Control", "Expires"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("the 500 carries the handler's %s: %q", k, v)
		}
	}
}

// TestResponseCapCloseDelimitedAbort: a response whose end is the
// connection's close has no framing to lose: an HTTP/1.0 request (no
// chunking; nginx proxies with HTTP/1.0 by default) or a handler's
// Transfer-Encoding: identity. Aborting it with a clean close would make
// the truncated body look whole, so the client must see an error.
func TestResponseCapCloseDelimitedAbort(t *testing.T) {
	t.Parallel()
	const limit = 10000
	s := trapServer(t, limit, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("identity") {
			w.Header().Set("Transfer-Encoding", "identity")
		}
		w.Write(text(5000))
		w.(http.Flusher).Flush()
		w.Write(text(limit + 1)[5000:])
	}, &logRecorder{})

	// HTTP/1.0, by hand: the Go client speaks HTTP/1.1 only.
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")
	got, err := io.ReadAll(conn)
	if err == nil {
		t.Errorf("HTTP/1.0: %d bytes and a clean close; want an error", len(got))
	}

	// HTTP/1.0 over TLS: no close_notify may mark a clean end.
	ts := httptest.NewUnstartedServer(s.Config.Handler)
	ts.StartTLS()
	defer ts.Close()
	tconn, err := tls.Dial("tcp", ts.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tconn.Close()
	io.WriteString(tconn, "GET / HTTP/1.0\r\nHost: x\r\n\r\n")
	if got, err := io.ReadAll(tconn); err == nil {
		t.Errorf("HTTP/1.0 over TLS: %d bytes and a clean close; want an error", len(got))
	}

	for _, tr := range []http.RoundTripper{s.Client().Transport, &boundhttp.Transport{Base: s.Client().Transport}} {
		resp, body, err := get(t, tr, s.URL+"?identity")
		if err == nil {
			t.Errorf("%T, Transfer-Encoding identity: %v, %d bytes and a clean end; want an error", tr, resp.Status, len(body))
		}
	}
}

// noFlush is a ResponseWriter that cannot flush (no Flush, FlushError or
// Unwrap): a wrapper some middleware outside might put in.
type noFlush struct{ w http.ResponseWriter }

func (n noFlush) Header() http.Header         { return n.w.Header() }
func (n noFlush) Write(p []byte) (int, error) { return n.w.Write(p) }
func (n noFlush) WriteHeader(code int)        { n.w.WriteHeader(code) }

// TestResponseCapUnsupportedFlushSendsNothing: a flush through
// http.ResponseController on a writer that cannot flush reports
// http.ErrNotSupported and sends nothing, so a breach after it is still a
// 500 problem, not an aborted response.
func TestResponseCapUnsupportedFlushSendsNothing(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: 100, Logger: slog.New(&logRecorder{})})
	if err != nil {
		t.Fatal(err)
	}
	ferr := make(chan error, 1)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("0123456789"))
		ferr <- http.NewResponseController(w).Flush()
		w.Write(text(100))
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(noFlush{w}, r) }))
	defer s.Close()
	resp, body, err := get(t, s.Client().Transport, s.URL)
	if got := <-ferr; !errors.Is(got, http.ErrNotSupported) {
		t.Errorf("Flush on a writer that cannot flush: %v, want http.ErrNotSupported", got)
	}
	if err != nil || resp.StatusCode != 500 || problem(t, string(body)).Observed != 110 {
		t.Errorf("110 bytes over a cap of 100 after an unsupported flush: %v, %v, %q; want a 500 problem, observed 110", err, resp, body)
	}
}

// TestResponseCapPathsThatHold walks paths no other test walks: HEAD
// (net/http discards the body, the cap still counts it, so HEAD answers
// what GET would), a cap of math.MaxInt64, io.WriteString, a 103 Early
// Hints before a breach, and ResponseController's deadline and full
// duplex calls through the cap.
func TestResponseCapPathsThatHold(t *testing.T) {
	t.Parallel()
	h := func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		n, _ := strconv.Atoi(q.Get("n"))
		if q.Has("hints") {
			w.Header().Set("Link", "</style.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
		}
		if q.Has("rc") {
			rc := http.NewResponseController(w)
			if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
				panic(err)
			}
			if err := rc.EnableFullDuplex(); err != nil {
				panic(err)
			}
		}
		if q.Has("readfrom") {
			w.(io.ReaderFrom).ReadFrom(struct{ io.Reader }{bytes.NewReader(text(n))})
			return
		}
		w.Write(text(n))
	}
	small := trapServer(t, 100, h, &logRecorder{})
	huge := trapServer(t, math.MaxInt64, h, &logRecorder{})
	for _, tt := range []struct {
		s      *httptest.Server
		method string
		query  string
		status int
	}{
		{small, "HEAD", "n=100", 200},
		{small, "HEAD", "n=101", 500},
		{small, "GET", "n=100", 200},
		{small, "GET", "n=101", 500},
		{small, "GET", "n=101&hints", 500},
		{small, "GET", "n=100&rc", 200},
		{small, "GET", "n=101&rc", 500},
		{huge, "GET", "n=10000", 200},
		{huge, "GET", "n=10000&readfrom", 200},
	} {
		req, _ := http.NewRequest(tt.method, tt.s.URL+"?"+tt.query, nil)
		resp, err := tt.s.Client().Do(req)
		if err != nil {
			t.Errorf("%s ?%s: %v", tt.method, tt.query, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		n, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(tt.query, "n="), "&")[0])
		switch {
		case err != nil || resp.StatusCode != tt.status:
			t.Errorf("%s ?%s: %v, %d; want %d", tt.method, tt.query, err, resp.StatusCode, tt.status)
		case tt.method == "HEAD" && len(body) > 0:
			t.Errorf("HEAD ?%s: %d body bytes", tt.query, len(body))
		case tt.method == "GET" && tt.status == 200 && !bytes.Equal(body, text(n)):
			t.Errorf("GET ?%s: %d bytes, want the %d written", tt.query, len(body), n)
		case tt.method == "GET" && tt.status == 500 && problem(t, string(body)).Stage != "response":
			t.Errorf("GET ?%s: %q, want a problem of stage response", tt.query, body)
		}
	}
}

// TestResponseCapHoldBoundary: 4096 held bytes are still unsent (a breach
// after them is a 500), 4097 are sent (a breach after them aborts), with
// the cap below, at and above the held bytes, on real connections.
func TestResponseCapHoldBoundary(t *testing.T) {
	t.Parallel()
	tests := []capCase{
		{"cap 4095, 4096 bytes", 4095, writePlan{n: 4096}, 500, 4096, false},
		{"cap 4096, 4096 bytes", 4096, writePlan{n: 4096}, 200, 0, false},
		{"cap 4096, 4097 bytes", 4096, writePlan{n: 4097}, 500, 4097, false},
		{"cap 4096, 4097 bytes in 4096+1", 4096, writePlan{n: 4097, piece: 4096}, 500, 4097, false},
		{"cap 5000, 4096 held, then over", 5000, writePlan{n: 5001, piece: 4096}, 500, 5001, false},
		{"cap 5000, 4095 held, then over", 5000, writePlan{n: 5001, piece: 4095}, 500, 5001, false},
		{"cap 5000, 4097 sent, then over", 5000, writePlan{n: 5001, piece: 4097}, aborted, 0, false},
		{"cap 5000, 4097 sent, then the cap", 5000, writePlan{n: 5000, piece: 4097}, 200, 0, false},
	}
	for _, h2 := range []bool{false, true} {
		for _, tt := range tests {
			checkCapped(t, h2, tt)
		}
	}
}

// TestResponseCapTrailerValuesStayTrailers: the values of declared
// trailers, set after the body as net/http documents, are sent as
// trailers only, as without the cap; holding the status must not move
// them into the header.
func TestResponseCapTrailerValuesStayTrailers(t *testing.T) {
	t.Parallel()
	for _, explicit := range []bool{false, true} {
		for _, h2 := range []bool{false, true} {
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: 1000})
			if err != nil {
				t.Fatal(err)
			}
			s := httptest.NewUnstartedServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Trailer", "X-Sum")
				if explicit {
					w.WriteHeader(http.StatusOK)
				}
				io.WriteString(w, "hello")
				w.Header().Set("X-Sum", "abc")
			})))
			s.EnableHTTP2 = h2
			s.StartTLS()
			resp, body, err := get(t, s.Client().Transport, s.URL)
			s.Close()
			if err != nil || string(body) != "hello" {
				t.Fatalf("%v, %q", err, body)
			}
			if got, tr := resp.Header.Get("X-Sum"), resp.Trailer.Get("X-Sum"); got != "" || tr != "abc" {
				t.Errorf("%s, WriteHeader %v: X-Sum in the header %q, in the trailer %q; want only the trailer's abc", resp.Proto, explicit, got, tr)
			}
		}
	}
}

// TestResponseCapHijackedAndOwnRejections: a hijacked connection is outside
// the cap, and the middleware's own rejections are not charged to it.
func TestResponseCapHijackedAndOwnRejections(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: 10, Budget: limits.Budget{MaxWireBytes: 5}})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("h", 100)
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(big), big)
		rw.Flush()
	})))
	defer s.Close()
	resp, body, err := get(t, s.Client().Transport, s.URL)
	if err != nil || resp.StatusCode != 200 || string(body) != big {
		t.Errorf("hijacked: %v, %v, %d bytes; want 200 and the %d bytes written on the connection", err, resp, len(body), len(big))
	}
	resp, err = s.Client().Post(s.URL, "text/plain", strings.NewReader("123456"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if p := problem(t, string(data)); resp.StatusCode != 413 || p.Stage != "wire" {
		t.Errorf("request over the wire limit: %d %+v, want a 413 problem of stage wire (%d bytes, over the response cap)", resp.StatusCode, p, len(data))
	}
}

// TestResponseCapDeclaredLengthUntouched: a Content-Length within the cap
// is not held, so net/http's own refusal of bytes past it reaches the
// handler at the write that passes it.
func TestResponseCapDeclaredLengthUntouched(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		_, werr = io.WriteString(w, "0123456789+")
	})))
	defer s.Close()
	_, body, err := get(t, s.Client().Transport, s.URL)
	if werr != http.ErrContentLength || err == nil {
		t.Errorf("Content-Length 10, 11 bytes written: client %v %q, handler's error %v; want net/http's ErrContentLength at that write, and a client error", err, body, werr)
	}
}
