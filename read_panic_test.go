package boundhttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// panicSource is a response body whose Read panics after its first bytes:
// a decoder (or a source under it) that panics in the middle of a Read.
type panicSource struct {
	data []byte
	n    int
}

func (p *panicSource) Read(b []byte) (int, error) {
	if p.n > 0 {
		panic("source broke")
	}
	p.n = copy(b, p.data[:min(len(p.data), 16)])
	return p.n, nil
}

func (*panicSource) Close() error { return nil }

// panicBase answers every request with a gzip body that panics when read.
type panicBase struct{ data []byte }

func (p panicBase) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, ProtoMajor: 1, ProtoMinor: 1, ContentLength: int64(len(p.data)),
		Header: http.Header{"Content-Encoding": {"gzip"}}, Body: &panicSource{data: p.data}, Request: req}, nil
}

// TestReadPanicReleasesGuardAndCharge (trap: a guard entered and left by
// hand): a panic inside a decoder during a Read must not leave the body
// marked "reading" (a later Read would fail as concurrent and Close would
// never release the decoder) nor keep the body's in-flight charge. Checked
// in streaming mode, where the caller's Read panics, and in whole-body
// mode, where RoundTrip's read does. Sabotage: entering the guard without
// the deferred leave (leave after the read, as before) kept the guard held:
// Read after the panic failed with "concurrent Read" and InUse stayed at
// 65536 after Close.
func TestReadPanicReleasesGuardAndCharge(t *testing.T) {
	t.Parallel()
	data := encode("gzip", text(64<<10))
	for _, streaming := range []bool{true, false} {
		f := limits.NewInFlight(1 << 20)
		tr := &boundhttp.Transport{Base: panicBase{data}, Streaming: streaming, InFlight: f}
		var resp *http.Response
		var err error
		get := func() {
			req, _ := http.NewRequest("GET", "http://example.invalid/", nil)
			resp, err = tr.RoundTrip(req)
		}
		if !streaming {
			if !readPanics(get) {
				t.Fatalf("whole body: RoundTrip did not panic (err %v)", err)
			}
			if got := f.InUse(); got != 0 {
				t.Errorf("whole body: InUse() = %d after the panic, want 0", got)
			}
			continue
		}
		get()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1024)
		if !readPanics(func() { resp.Body.Read(buf) }) {
			t.Fatalf("streaming: Read did not panic")
		}
		_, err = resp.Body.Read(buf)
		if err == nil || strings.Contains(err.Error(), "concurrent Read") {
			t.Errorf("streaming: Read after the panic = %v, want a sticky failure, not a concurrent Read", err)
		}
		if cerr := resp.Body.Close(); cerr != nil {
			t.Errorf("streaming: Close after the panic = %v", cerr)
		}
		if got := f.InUse(); got != 0 {
			t.Errorf("streaming: InUse() = %d after the panic and Close, want 0", got)
		}
		if _, err := resp.Body.Read(buf); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("Read after Close = %v, want an error", err)
		}
	}
}

// TestReadPanicInHandlerReleasesCharge: the same on the server: a handler
// whose body Read panics (here the request body under the decoder, or
// net/http's own body of a Content-Length request, read whole with no
// decoder, whose connection panics) leaves no charge once net/http has
// recovered, whether the handler closed the body or not.
func TestReadPanicInHandlerReleasesCharge(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		streaming bool
		req       func() *http.Request
	}{
		{"streaming, gzip", true, func() *http.Request {
			req, _ := http.NewRequest("POST", "/", &panicSource{data: encode("gzip", text(4096))})
			req.Header.Set("Content-Encoding", "gzip")
			return req
		}},
		{"whole, gzip", false, func() *http.Request {
			req, _ := http.NewRequest("POST", "/", &panicSource{data: encode("gzip", text(4096))})
			req.Header.Set("Content-Encoding", "gzip")
			return req
		}},
		{"whole, framed by its Content-Length, no decoder", false, func() *http.Request {
			// net/http's own body (http.ReadRequest parses as the server
			// does) over a connection whose Read panics after the head.
			head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4096\r\n\r\n"
			req, err := http.ReadRequest(bufio.NewReader(io.MultiReader(strings.NewReader(head), &panicSource{data: text(4096)})))
			if err != nil {
				t.Fatal(err)
			}
			if !boundhttp.LengthFramed(req) {
				t.Fatal("the request is not read as framed by its length")
			}
			return req
		}},
	} {
		f := limits.NewInFlight(1 << 20)
		mw := mustMW(t, boundhttp.MiddlewareConfig{Streaming: tt.streaming, InFlight: f})
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body) }))
		req := tt.req()
		// A writer that takes read deadlines: the whole body's Timeout
		// (60 s by default) is the connection's, as behind net/http.
		if !readPanics(func() { h.ServeHTTP(deadlineDiscard{discardWriter{http.Header{}}}, req) }) {
			t.Fatalf("%s: no panic", tt.name)
		}
		if got := f.InUse(); got != 0 {
			t.Errorf("%s: InUse() = %d after the panic, want 0", tt.name, got)
		}
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header       { return d.h }
func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) WriteHeader(int)             {}

// deadlineDiscard is a discardWriter whose connection takes read deadlines.
type deadlineDiscard struct{ discardWriter }

func (deadlineDiscard) SetReadDeadline(time.Time) error { return nil }

// panicAfterFirst wraps a connection's body: its second Read panics, its
// Close is the connection's and is recorded.
type panicAfterFirst struct {
	io.ReadCloser
	reads  int
	closed chan struct{}
}

func (p *panicAfterFirst) Read(b []byte) (int, error) {
	if p.reads++; p.reads > 1 {
		panic("decoder broke")
	}
	return p.ReadCloser.Read(b[:min(len(b), 16)])
}

func (p *panicAfterFirst) Close() error {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	return p.ReadCloser.Close()
}

// panicConn is a base transport whose response bodies panic on their second
// Read; it records each request's context and body.
type panicConn struct {
	base http.RoundTripper
	ctx  context.Context
	body *panicAfterFirst
}

func (p *panicConn) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	p.ctx, p.body = req.Context(), &panicAfterFirst{ReadCloser: resp.Body, closed: make(chan struct{})}
	resp.Body = p.body
	return resp, nil
}

// TestReadPanicDropsConnection (trap: a panic that leaves the connection
// to nobody): a panic in a decoder while RoundTrip reads a whole body, or
// while http.Client reads a redirect's body, reaches no caller that could
// close the body: the connection (its read loop goroutine, its socket) and
// the request's context stayed alive until the server gave up. A body whose
// Read panicked can never be read again, so the panic itself must drop the
// connection, in every mode.
func TestReadPanicDropsConnection(t *testing.T) {
	t.Parallel()
	data := encode("gzip", text(64<<10))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			w.Header().Set("Location", "/")
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusFound)
			w.Write(data)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(data)
	}))
	t.Cleanup(s.Close)
	for _, tc := range []struct {
		name      string
		path      string
		streaming bool
	}{{"whole", "/", false}, {"streaming", "/", true}, {"lazy redirect", "/redirect", false}} {
		base := &panicConn{base: http.DefaultTransport.(*http.Transport).Clone()}
		tr := &boundhttp.Transport{Base: base, Streaming: tc.streaming}
		c := &http.Client{Transport: tr}
		if !readPanics(func() {
			resp, err := c.Get(s.URL + tc.path)
			if err != nil {
				return
			}
			resp.Body.Read(make([]byte, 1024)) // not closed: the panic skips the caller's Close
		}) {
			t.Errorf("%s: no panic", tc.name)
			continue
		}
		select {
		case <-base.body.closed:
		default:
			t.Errorf("%s: the connection's body is open after the panic, want it closed", tc.name)
		}
		if base.ctx.Err() == nil {
			t.Errorf("%s: the request's context is alive after the panic, want it cancelled", tc.name)
		}
	}
}

// closePanicsBody is a base transport's body that reads like any other
// and panics when closed: a panic that comes after the body was read
// whole, in the step that hands the read chunks to the body.
type closePanicsBody struct{ io.Reader }

func (closePanicsBody) Close() error { panic("close broke") }

// TestPanicAfterWholeReadGivesBackCharge (trap: a whole body's chunks
// owned by no one between the read and the hand-over): RoundTrip reads a
// whole body into chunks, checks its shape and closes the source before
// the chunks belong to the body; a panic in that stretch (here the base
// transport's Close, on the real path; a JSON check, a source's Close on
// the server) dropped the chunks with their in-flight charge still
// counted, so InUse never went back to 0. With and without a JSON check.
func TestPanicAfterWholeReadGivesBackCharge(t *testing.T) {
	t.Parallel()
	doc := `{"a":"` + strings.Repeat("x", 100<<10) + `"}`
	for _, json := range []bool{false, true} {
		f := limits.NewInFlight(1 << 20)
		tr := &boundhttp.Transport{InFlight: f, Base: rtFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
				ContentLength: int64(len(doc)), Body: closePanicsBody{strings.NewReader(doc)}, Request: r}, nil
		})}
		if json {
			tr.JSON = &limits.JSON{}
		}
		if !readPanics(func() { tr.RoundTrip(newGet(t, "http://example.invalid/")) }) {
			t.Fatalf("json %v: RoundTrip did not panic", json)
		}
		if got := f.InUse(); got != 0 {
			t.Errorf("json %v: InUse() = %d after a panic past the whole read, want 0", json, got)
		}
	}
}
