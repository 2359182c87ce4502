package boundhttp_test

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestResponseCapConfig: zero leaves the writer alone, negative is refused.
func TestResponseCapConfig(t *testing.T) {
	t.Parallel()
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: -1}); err == nil {
		t.Errorf("NewMiddleware(MaxResponseBytes: -1) = nil error, want one")
	}
	for _, tt := range []struct {
		limit   int64
		wrapped bool
	}{{0, false}, {1, true}} {
		var typ string
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: tt.limit})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			typ = fmt.Sprintf("%T", w)
		})))
		resp, err := s.Client().Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s.Close()
		if got := typ != "*http.response"; got != tt.wrapped {
			t.Errorf("MaxResponseBytes %d: the handler writes to %s; wrapped %v, want %v", tt.limit, typ, got, tt.wrapped)
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

// TestResponseCapStreaming: in streaming mode the cap applies the same way,
// and a request body breach the handler does not answer is still the
// middleware's 413.
func TestResponseCapStreaming(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, MaxResponseBytes: 100,
		Budget: limits.Budget{MaxWireBytes: 50}})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write(text(n))
	})))
	defer s.Close()
	for _, tt := range []struct {
		n, body int
		status  int
		stage   string
	}{{100, 10, 200, ""}, {101, 10, 500, "response"}, {10, 51, 413, "wire"}} {
		resp, err := s.Client().Post(s.URL+"?n="+strconv.Itoa(tt.n), "text/plain", strings.NewReader(strings.Repeat("b", tt.body)))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tt.status || tt.stage != "" && string(problem(t, string(data)).Stage) != tt.stage {
			t.Errorf("streaming, %d-byte request, %d-byte response: %v %d %q; want %d %s", tt.body, tt.n, err, resp.StatusCode, data, tt.status, tt.stage)
		}
	}
}

// TestResponseCapAloneChargesNoRequest pins the trap of a response cap that
// only comes with a request cap: ResponseCap leaves the request body alone
// (a 5 MiB body, over the Middleware's 4 MiB default, reaches the handler
// whole, its gzip coding undecoded and its header kept) and caps only
// what the handler writes.
func TestResponseCapAloneChargesNoRequest(t *testing.T) {
	t.Parallel()
	const size = 5 << 20
	var got int
	var coding string
	capped, err := boundhttp.NewResponseCap(boundhttp.ResponseCapConfig{MaxBytes: 10, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(capped(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			t.Errorf("request body: %v", err)
		}
		got, coding = int(n), r.Header.Get("Content-Encoding")
		io.WriteString(w, r.URL.Query().Get("say"))
	})))
	defer s.Close()
	for _, tt := range []struct {
		say    string
		status int
	}{{"0123456789", 200}, {"0123456789+", 500}} {
		req, _ := http.NewRequest("POST", s.URL+"?say="+tt.say, strings.NewReader(strings.Repeat("z", size)))
		req.Header.Set("Content-Encoding", "gzip")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got != size || coding != "gzip" || resp.StatusCode != tt.status || tt.status == 200 && string(data) != tt.say {
			t.Errorf("answer %q: handler read %d bytes with Content-Encoding %q; client got %d %.100q; want %d bytes, gzip, %d",
				tt.say, got, coding, resp.StatusCode, data, size, tt.status)
		}
	}
}

// TestResponseCapAloneConfig: zero and negative are configuration errors
// (ResponseCap panics, NewResponseCap returns the error); the largest cap
// is accepted and bounds nothing a handler can write.
func TestResponseCapAloneConfig(t *testing.T) {
	t.Parallel()
	for _, max := range []int64{0, -1, math.MinInt64} {
		if _, err := boundhttp.NewResponseCap(boundhttp.ResponseCapConfig{MaxBytes: max}); err == nil {
			t.Errorf("NewResponseCap(MaxBytes: %d) = nil error, want one", max)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ResponseCap(%d) did not panic", max)
				}
			}()
			boundhttp.ResponseCap(max)
		}()
	}
	h := boundhttp.ResponseCap(math.MaxInt64)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, strings.NewReader(strings.Repeat("m", 10000)))
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || w.Body.Len() != 10000 {
		t.Errorf("cap math.MaxInt64: %d, %d bytes; want 200, 10000", w.Code, w.Body.Len())
	}
}
