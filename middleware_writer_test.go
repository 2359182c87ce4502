package boundhttp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
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

// unwrapOnly is a writer wrapper of the modern kind: it offers Unwrap for
// http.ResponseController and none of the optional interfaces.
type unwrapOnly struct{ http.ResponseWriter }

func (u unwrapOnly) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// TestStreamingControllerFlushCountsAsWriting: in streaming mode the
// middleware answers a breach only when the handler has not started its
// answer. A handler that started it with http.ResponseController's Flush
// (headers out, status 200) must count as having written, also when the
// writer under the middleware is a wrapper with only Unwrap: the
// controller then reaches the server's writer through the middleware's
// Unwrap, and a problem document was appended to the handler's 200.
func TestStreamingControllerFlushCountsAsWriting(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxWireBytes: 10}})
	if err != nil {
		t.Fatal(err)
	}
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil { // read on after the headers
			t.Errorf("ResponseController.EnableFullDuplex: %v", err)
		}
		if err := rc.Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
		io.ReadAll(r.Body)
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(unwrapOnly{w}, r)
	}))
	t.Cleanup(s.Close)
	req, _ := http.NewRequest("POST", s.URL, struct{ io.Reader }{strings.NewReader(strings.Repeat("x", 100))})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(answer), "urn:boundhttp:problem") {
		t.Errorf("breach after the handler flushed its 200: %d %q; want the handler's 200 and no problem document in it", resp.StatusCode, answer)
	}
}

// TestMiddlewareHandlerHeader: whatever the coding and framing, the handler
// sees the decoded length in ContentLength and in the Content-Length header
// and no Content-Encoding, and the caller's header is left as it arrived
// (an identity body with a Content-Length shares it, as with
// http.MaxBytesHandler; every other one gets a copy).
func TestMiddlewareHandlerHeader(t *testing.T) {
	t.Parallel()
	const size = 5000
	for _, coding := range []string{"identity", "gzip"} {
		for _, chunked := range []bool{false, true} {
			var got, before, after string
			h := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = fmt.Sprintf("%d %q %q", r.ContentLength, r.Header.Get("Content-Length"), r.Header.Get("Content-Encoding"))
			}))
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				before = fmt.Sprint(r.Header)
				h.ServeHTTP(w, r)
				after = fmt.Sprint(r.Header)
			}))
			post(t, s.URL, coding, encode(coding, text(size)), chunked)
			s.Close()
			if want := fmt.Sprintf("%d %q %q", size, strconv.Itoa(size), ""); got != want {
				t.Errorf("%s, chunked %v: handler saw ContentLength, Content-Length, Content-Encoding %s; want %s", coding, chunked, got, want)
			}
			if after != before {
				t.Errorf("%s, chunked %v: the caller's header changed from %s to %s", coding, chunked, before, after)
			}
		}
	}
}

// TestMiddlewareHandlerHeaderStaleLength: an identity body whose
// ContentLength is right but whose Content-Length header says otherwise (an
// outer handler replaced the body and set ContentLength only, or a client
// wrote "005") must not share that header: the handler sees the decoded
// length in both, and the caller's header stays as it was.
func TestMiddlewareHandlerHeaderStaleLength(t *testing.T) {
	t.Parallel()
	for _, stale := range [][]string{{"7"}, {"005"}, {"5", "5"}, {"+5"}, {"-5"}, {" 5"}, {"5 "}, {"15"}, {"50"}, {""}, {"5x"}} {
		var got string
		h := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = fmt.Sprintf("%d %q", r.ContentLength, r.Header["Content-Length"])
		}))
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("hello"))
		r.Header["Content-Length"] = stale
		before := fmt.Sprint(r.Header)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if want := fmt.Sprintf("%d %q", 5, []string{"5"}); got != want {
			t.Errorf("header Content-Length %q: handler saw ContentLength, Content-Length %s; want %s", stale, got, want)
		}
		if after := fmt.Sprint(r.Header); after != before {
			t.Errorf("header Content-Length %q: the caller's header changed from %s to %s", stale, before, after)
		}
	}
}

// TestOuterHandlerChangedContentLengthOfNetHTTPBody: an outer handler that
// hands on net/http's own body of a Content-Length request with another
// ContentLength (set on a copy of the request, header untouched) did not
// change what the client framed: the handler gets the body the client sent,
// whole, with its true length, as from any other body. Reading net/http's
// body as framed by the changed field would answer a well-framed client 400
// ("longer than its declared length") for the outer handler's doing.
func TestOuterHandlerChangedContentLengthOfNetHTTPBody(t *testing.T) {
	t.Parallel()
	for _, field := range []int64{3, 4, 6, 50} {
		var mu sync.Mutex
		var outcomes []string
		mw := mustMW(t, boundhttp.MiddlewareConfig{Observe: func(o boundhttp.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			outcomes = append(outcomes, fmt.Sprintf("%s %s %v", o.Kind, o.Stage(), o.Usage))
		}})
		inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, err := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%q %d %q %v", data, r.ContentLength, r.Header["Content-Length"], err)
		}))
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r2 := *r
			r2.ContentLength = field
			inner.ServeHTTP(w, &r2)
		}))
		status, answer := rawExchange(t, s.Listener.Addr().String(),
			"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
		s.Close()
		if want := fmt.Sprintf("%q %d %q %v", "hello", 5, []string{"5"}, nil); status != http.StatusOK || answer != want {
			t.Errorf("ContentLength %d: answer %d %s; want 200 %s", field, status, answer, want)
		}
		mu.Lock()
		if got, want := fmt.Sprint(outcomes), "[accepted  wire=5 decoded=5]"; got != want {
			t.Errorf("ContentLength %d: observed %s; want %s", field, got, want)
		}
		mu.Unlock()
	}
}

// TestOuterHandlerLengthOnChunkedNetHTTPBody (trap: a length an outer
// handler gave a chunked body): net/http's own body of a chunked request,
// to which an outer handler gave a ContentLength and a Content-Length
// header that agree, is still framed by its chunks, not by that length.
// The Middleware reads it to its last chunk, as it did before any body was
// read as framed by its length, and hands the handler every byte.
func TestOuterHandlerLengthOnChunkedNetHTTPBody(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{3, 5, 8} {
		inner := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, err := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%q %d %v", data, r.ContentLength, err)
		}))
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r2 := *r
			r2.ContentLength = n
			r2.Header = r.Header.Clone()
			r2.Header.Set("Content-Length", fmt.Sprint(n))
			inner.ServeHTTP(w, &r2)
		}))
		status, answer := rawExchange(t, s.Listener.Addr().String(),
			"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
		s.Close()
		if want := fmt.Sprintf("%q %d %v", "hello", 5, nil); status != http.StatusOK || answer != want {
			t.Errorf("length %d: answer %d %s; want 200 %s", n, status, answer, want)
		}
	}
}
