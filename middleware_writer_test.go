package boundhttp_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
)

// capabilities lists the optional interfaces w has.
func capabilities(w http.ResponseWriter) string {
	var c []string
	if _, ok := w.(http.Flusher); ok {
		c = append(c, "Flusher")
	}
	if _, ok := w.(http.Hijacker); ok {
		c = append(c, "Hijacker")
	}
	if _, ok := w.(io.ReaderFrom); ok {
		c = append(c, "ReaderFrom")
	}
	if _, ok := w.(http.Pusher); ok {
		c = append(c, "Pusher")
	}
	return strings.Join(c, " ")
}

// writerWrappers are every way this package wraps the writer it hands a
// handler: the streaming body's write tracker, the response cap inside the
// Middleware, both stacked, and the response cap on its own.
func writerWrappers(t *testing.T) []struct {
	name string
	mw   func(http.Handler) http.Handler
} {
	t.Helper()
	mw := func(c boundhttp.MiddlewareConfig) func(http.Handler) http.Handler {
		m, err := boundhttp.NewMiddleware(c)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return []struct {
		name string
		mw   func(http.Handler) http.Handler
	}{
		{"streaming", mw(boundhttp.MiddlewareConfig{Streaming: true})},
		{"response cap", mw(boundhttp.MiddlewareConfig{MaxResponseBytes: 1 << 20})},
		{"streaming and response cap", mw(boundhttp.MiddlewareConfig{Streaming: true, MaxResponseBytes: 1 << 20})},
		{"ResponseCap", boundhttp.ResponseCap(1 << 20)},
	}
}

// fakeWriter is a server's writer that records which optional paths were
// taken. The types below give it one optional interface each.
type fakeWriter struct {
	h     http.Header
	body  strings.Builder
	calls []string
}

func (f *fakeWriter) Header() http.Header         { return f.h }
func (f *fakeWriter) Write(p []byte) (int, error) { return f.body.Write(p) }
func (f *fakeWriter) WriteHeader(int)             {}

var errFakeHijack = errors.New("fake hijack")

type (
	fakeFlusher    struct{ f *fakeWriter }
	fakeHijacker   struct{ f *fakeWriter }
	fakeReaderFrom struct{ f *fakeWriter }
	fakePusher     struct{ f *fakeWriter }
)

func (x fakeFlusher) Flush() { x.f.calls = append(x.f.calls, "Flush") }
func (x fakeHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	x.f.calls = append(x.f.calls, "Hijack")
	return nil, nil, errFakeHijack
}
func (x fakeReaderFrom) ReadFrom(src io.Reader) (int64, error) {
	x.f.calls = append(x.f.calls, "ReadFrom")
	return io.Copy(&x.f.body, src)
}
func (x fakePusher) Push(string, *http.PushOptions) error {
	x.f.calls = append(x.f.calls, "Push")
	return nil
}

// fakeWriters returns server writers with each optional interface alone,
// none, and the sets of net/http's HTTP/1.1 and HTTP/2 writers and all four,
// and the fakeWriter underneath each.
func fakeWriters() ([]http.ResponseWriter, []*fakeWriter) {
	n := func() *fakeWriter { return &fakeWriter{h: http.Header{}} }
	f1, f2, f3, f4, f5, f6, f7, f8 := n(), n(), n(), n(), n(), n(), n(), n()
	return []http.ResponseWriter{
		f1,
		struct {
			*fakeWriter
			fakeFlusher
		}{f2, fakeFlusher{f2}},
		struct {
			*fakeWriter
			fakeHijacker
		}{f3, fakeHijacker{f3}},
		struct {
			*fakeWriter
			fakeReaderFrom
		}{f4, fakeReaderFrom{f4}},
		struct {
			*fakeWriter
			fakePusher
		}{f5, fakePusher{f5}},
		struct {
			*fakeWriter
			fakeFlusher
			fakeHijacker
			fakeReaderFrom
		}{f6, fakeFlusher{f6}, fakeHijacker{f6}, fakeReaderFrom{f6}},
		struct {
			*fakeWriter
			fakeFlusher
			fakePusher
		}{f7, fakeFlusher{f7}, fakePusher{f7}},
		struct {
			*fakeWriter
			fakeFlusher
			fakeHijacker
			fakeReaderFrom
			fakePusher
		}{f8, fakeFlusher{f8}, fakeHijacker{f8}, fakeReaderFrom{f8}, fakePusher{f8}},
	}, []*fakeWriter{f1, f2, f3, f4, f5, f6, f7, f8}
}

// TestHandlerWriterHasExactlyTheInterfacesOfTheWriterItWraps pins the trap
// of a wrapping writer that hides or invents what the server's writer can
// do (one wrapper dropped http.Pusher, another always offered
// io.ReaderFrom): for every writer this package hands a handler, over
// writers with each optional interface alone, none, net/http's sets and all
// four, the handler's writer has exactly the interfaces underneath, and
// each one reaches the writer underneath.
func TestHandlerWriterHasExactlyTheInterfacesOfTheWriterItWraps(t *testing.T) {
	t.Parallel()
	for _, wr := range writerWrappers(t) {
		unders, fakes := fakeWriters()
		for i, under := range unders {
			want := capabilities(under)
			var got string
			var hijackErr, flushErr error
			h := wr.mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				got = capabilities(w)
				if p, ok := w.(http.Pusher); ok {
					p.Push("/pushed", nil)
				}
				if fl, ok := w.(http.Flusher); ok {
					fl.Flush()
				}
				flushErr = http.NewResponseController(w).Flush()
				if rf, ok := w.(io.ReaderFrom); ok {
					rf.ReadFrom(strings.NewReader("rf"))
				} else {
					io.WriteString(w, "rf")
				}
				if hj, ok := w.(http.Hijacker); ok {
					_, _, hijackErr = hj.Hijack()
				}
			}))
			h.ServeHTTP(under, httptest.NewRequest("POST", "/", strings.NewReader("x")))
			f := fakes[i]
			name := wr.name + " over {" + want + "}"
			if got != want {
				t.Errorf("%s: the handler's writer has {%s}", name, got)
			}
			if f.body.String() != "rf" {
				t.Errorf("%s: the writer underneath got %q, want %q", name, f.body.String(), "rf")
			}
			for _, m := range []struct {
				iface, call string
				n           int // calls when the writer underneath has iface
			}{{"Flusher", "Flush", 2}, {"Pusher", "Push", 1}, {"Hijacker", "Hijack", 1}} {
				var n int
				for _, c := range f.calls {
					if c == m.call {
						n++
					}
				}
				if want := map[bool]int{true: m.n}[strings.Contains(want, m.iface)]; n != want {
					t.Errorf("%s: calls underneath %v; want %s %d times", name, f.calls, m.call, want)
				}
			}
			if strings.Contains(want, "Flusher") == errors.Is(flushErr, http.ErrNotSupported) {
				t.Errorf("%s: ResponseController.Flush = %v", name, flushErr)
			}
			if strings.Contains(want, "Hijacker") && !errors.Is(hijackErr, errFakeHijack) {
				t.Errorf("%s: Hijack = %v, want the writer underneath's error", name, hijackErr)
			}
		}
	}
}

// TestHandlerWriterOverRealServers pins the same over net/http's own
// writers, HTTP/1.1 and HTTP/2: the handler's writer has the interfaces of
// the server's writer, http.ResponseController reaches it through Unwrap
// (a write deadline is set, a flush sends), io.Copy goes through ReadFrom
// where there is one, and a hijack on HTTP/1.1 answers on the connection.
func TestHandlerWriterOverRealServers(t *testing.T) {
	t.Parallel()
	for _, wr := range writerWrappers(t) {
		var outer, inner string
		var deadline, flush error
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			outer = capabilities(w)
			wr.mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inner = capabilities(w)
				io.ReadAll(r.Body)
				if r.URL.Path == "/hijack" {
					c, buf, err := w.(http.Hijacker).Hijack()
					if err != nil {
						t.Error(err)
						return
					}
					defer c.Close()
					buf.WriteString("HTTP/1.1 299 Hijacked\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
					buf.Flush()
					return
				}
				rc := http.NewResponseController(w)
				deadline = rc.SetWriteDeadline(time.Now().Add(time.Minute))
				io.Copy(w, strings.NewReader("copied")) // through ReadFrom where there is one
				flush = rc.Flush()
			})).ServeHTTP(w, r)
		})
		s1 := httptest.NewServer(h)
		s2 := httptest.NewUnstartedServer(h)
		s2.EnableHTTP2 = true
		s2.StartTLS()
		for _, tt := range []struct {
			name string
			s    *httptest.Server
			want string
		}{
			{"HTTP/1.1", s1, "Flusher Hijacker ReaderFrom"},
			{"HTTP/2", s2, "Flusher Pusher"},
		} {
			outer, inner, deadline, flush = "", "", nil, nil
			resp, err := tt.s.Client().Post(tt.s.URL, "text/plain", strings.NewReader("body"))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if inner != outer || outer != tt.want || string(data) != "copied" || deadline != nil || flush != nil {
				t.Errorf("%s, %s: handler's writer has {%s}, server's {%s}, answer %q, SetWriteDeadline %v, Flush %v; want both {%s}, %q, no errors",
					wr.name, tt.name, inner, outer, data, deadline, flush, tt.want, "copied")
			}
		}
		status, _ := rawExchange(t, s1.Listener.Addr().String(), "POST /hijack HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody")
		if status != 299 {
			t.Errorf("%s: hijacked answer: status %d, want 299", wr.name, status)
		}
		s1.Close()
		s2.Close()
	}
}
