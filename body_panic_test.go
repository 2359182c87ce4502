package boundhttp_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

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

// readPanics reports whether f panicked.
func readPanics(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
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
// whose body Read panics (here the request body under the decoder) leaves
// no charge once net/http has recovered, whether the handler closed the
// body or not.
func TestReadPanicInHandlerReleasesCharge(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{true, false} {
		f := limits.NewInFlight(1 << 20)
		mw := mustMW(t, boundhttp.MiddlewareConfig{Streaming: streaming, InFlight: f})
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body) }))
		req, _ := http.NewRequest("POST", "/", &panicSource{data: encode("gzip", text(4096))})
		req.Header.Set("Content-Encoding", "gzip")
		if !readPanics(func() { h.ServeHTTP(discardWriter{http.Header{}}, req) }) {
			t.Fatalf("streaming %v: no panic", streaming)
		}
		if got := f.InUse(); got != 0 {
			t.Errorf("streaming %v: InUse() = %d after the panic, want 0", streaming, got)
		}
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header       { return d.h }
func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) WriteHeader(int)             {}
