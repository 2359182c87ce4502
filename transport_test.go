package boundhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

func TestTransportDecodedBoundary(t *testing.T) {
	t.Parallel()
	const limit = 30000
	for _, c := range codings {
		for _, chunked := range []bool{false, true} {
			for _, tt := range []struct {
				size  int
				stage string
			}{{0, ""}, {limit - 1, ""}, {limit, ""}, {limit + 1, "decoded"}, {20 * limit, "decoded"}} {
				data := text(tt.size)
				s := server(t, body{coding: c, data: encode(c, data), chunked: chunked})
				tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: limit, MaxWireBytes: 1 << 20}}
				resp, got, err := get(t, tr, s.URL)
				if stageOf(err) != tt.stage {
					t.Errorf("GET %s body of %d (chunked %v), limit %d: %v, want stage %q", c, tt.size, chunked, limit, err, tt.stage)
					continue
				}
				if err != nil {
					var ue *url.Error
					if !errors.As(err, &ue) || resp != nil {
						t.Errorf("GET %s: error %T with response %v, want a *url.Error and no response", c, err, resp)
					}
					continue
				}
				if !bytes.Equal(got, data) {
					t.Errorf("GET %s body of %d: got %d different bytes", c, tt.size, len(got))
				}
				if resp.ContentLength != int64(len(data)) || resp.Header.Get("Content-Encoding") != "" {
					t.Errorf("GET %s: ContentLength %d, Content-Encoding %q; want %d and none", c, resp.ContentLength, resp.Header.Get("Content-Encoding"), len(data))
				}
				if want := c != "identity"; resp.Uncompressed != want {
					t.Errorf("GET %s: Uncompressed = %v, want %v", c, resp.Uncompressed, want)
				}
			}
		}
	}
}

func TestTransportWireBoundary(t *testing.T) {
	t.Parallel()
	for _, c := range codings {
		for _, chunked := range []bool{false, true} {
			wire := encode(c, text(20000))
			n := int64(len(wire))
			s := server(t, body{coding: c, data: wire, chunked: chunked})
			for _, tt := range []struct {
				limit int64
				stage string
			}{{n - 1, "wire"}, {n, ""}, {n + 1, ""}} {
				tr := &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: tt.limit}}
				_, _, err := get(t, tr, s.URL)
				if stageOf(err) != tt.stage {
					t.Errorf("GET %s of %d wire bytes (chunked %v), wire limit %d: %v, want stage %q", c, n, chunked, tt.limit, err, tt.stage)
				}
				var e *limits.Error
				if errors.As(err, &e) && e.Declared == chunked {
					t.Errorf("GET %s (chunked %v): Declared = %v; a Content-Length is rejected as declared, a chunked body as read", c, chunked, e.Declared)
				}
			}
		}
	}
}

// TestTransportDeclaredLengthRejectedBeforeBody: a Content-Length above the
// wire limit fails at once, although no body byte ever arrives.
func TestTransportDeclaredLengthRejectedBeforeBody(t *testing.T) {
	t.Parallel()
	u := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 5000001\r\n\r\n")
	start := time.Now()
	_, _, err := get(t, &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: 5000000}}, u)
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageWire || e.Observed != 5000001 || !e.Declared {
		t.Fatalf("GET with Content-Length 5000001, limit 5000000: %v, want declared wire rejection", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("rejection took %v, want it before the body is read", el)
	}
}

func TestTransportLyingContentLength(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(5000))
	// Overstated: the server closes after fewer bytes than declared.
	over := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(gz)+100, gz)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			http.ReadRequest(bufio.NewReader(conn))
			io.WriteString(conn, over)
			conn.Close()
		}
	}()
	_, _, err := get(t, &boundhttp.Transport{}, "http://"+ln.Addr().String())
	if stageOf(err) != "integrity" {
		t.Errorf("GET with overstated Content-Length: %v, want stage integrity", err)
	}
	// Understated: the body is cut at the declared length.
	under := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(gz)-10, gz)
	_, _, err = get(t, &boundhttp.Transport{}, rawServer(t, under))
	if stageOf(err) != "integrity" {
		t.Errorf("GET with understated Content-Length: %v, want stage integrity", err)
	}
}

func TestTransportErrorStatusCharged(t *testing.T) {
	t.Parallel()
	bomb := encode("gzip", bytes.Repeat([]byte("e"), 4<<20))
	for _, status := range []int{400, 404, 500, 503} {
		s := server(t, body{coding: "gzip", data: bomb, status: status})
		_, _, err := get(t, &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}, s.URL)
		if stageOf(err) != "decoded" {
			t.Errorf("GET %d with a bomb body: %v, want stage decoded", status, err)
		}
	}
}

// TestTransportConnectionReuse: a clean body returns its connection to the
// pool; a rejected one does not.
func TestTransportConnectionReuse(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		serve(w, body{coding: "gzip", data: encode("gzip", text(10000))})
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		serve(w, body{coding: "gzip", data: encode("gzip", text(4<<20))})
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	reused := func(path string) (bool, error) {
		var r bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { r = i.Reused },
		})
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+path, nil)
		resp, err := c.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return r, err
	}
	steps := []struct {
		path   string
		reused bool
		fail   bool
	}{
		{"/ok", false, false}, {"/ok", true, false}, {"/bomb", true, true}, {"/ok", false, false}, {"/ok", true, false},
	}
	for i, st := range steps {
		r, err := reused(st.path)
		if (err != nil) != st.fail || r != st.reused {
			t.Errorf("step %d GET %s: reused %v, err %v; want reused %v, failure %v", i, st.path, r, err, st.reused, st.fail)
		}
	}
}

func TestTransportAcceptEncoding(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer s.Close()
	do := func(tr *boundhttp.Transport, h http.Header) string {
		req, _ := http.NewRequest("GET", s.URL, nil)
		for k, v := range h {
			req.Header[k] = v
		}
		before := req.Header.Clone()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if fmt.Sprint(req.Header) != fmt.Sprint(before) {
			t.Errorf("RoundTrip changed the caller's header: %v, was %v", req.Header, before)
		}
		mu.Lock()
		defer mu.Unlock()
		return seen[len(seen)-1]
	}
	tests := []struct {
		tr   *boundhttp.Transport
		h    http.Header
		want string
	}{
		{&boundhttp.Transport{}, nil, boundhttp.DefaultAcceptEncoding},
		{&boundhttp.Transport{}, http.Header{"Accept-Encoding": {"gzip"}}, "gzip"},
		{&boundhttp.Transport{AcceptEncoding: "br"}, nil, "br"},
		{&boundhttp.Transport{AcceptEncoding: "br"}, http.Header{"Accept-Encoding": {"identity"}}, "identity"},
		{&boundhttp.Transport{}, http.Header{"Range": {"bytes=0-10"}}, "identity"},
	}
	for _, tt := range tests {
		if got := do(tt.tr, tt.h); got != tt.want {
			t.Errorf("Accept-Encoding sent for header %v, Transport.AcceptEncoding %q = %q, want %q", tt.h, tt.tr.AcceptEncoding, got, tt.want)
		}
	}
}

func TestTransportUnsupportedAndLayers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		coding string
		data   []byte
		stage  string
	}{
		{"compress", []byte("whatever"), "encoding"},
		{"gzip, sdch", []byte("whatever"), "encoding"},
		{"gzip, gzip", testencLayered(bytes.Repeat([]byte("l"), 8<<20), "gzip", "gzip"), "decoded"},
		{"gzip, br, zstd", testencLayered([]byte("x"), "gzip", "br", "zstd"), "layers"},
	}
	for _, tt := range tests {
		s := server(t, body{coding: tt.coding, data: tt.data})
		_, _, err := get(t, &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}, s.URL)
		if stageOf(err) != tt.stage {
			t.Errorf("GET Content-Encoding %q: %v, want stage %q", tt.coding, err, tt.stage)
		}
	}
}

// TestTransportBaseNeverDecodes: even a base with Go's transparent gzip
// enabled hands the coded bytes over, because the Transport always sets
// Accept-Encoding.
func TestTransportBaseNeverDecodes(t *testing.T) {
	t.Parallel()
	data := text(50000)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	base := &http.Transport{} // DisableCompression false: transparent gzip on
	defer base.CloseIdleConnections()
	var sawUncompressed, sawCoding atomic.Bool
	tr := &boundhttp.Transport{Base: rtFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := base.RoundTrip(r)
		if err == nil {
			sawUncompressed.Store(resp.Uncompressed)
			sawCoding.Store(resp.Header.Get("Content-Encoding") == "gzip")
		}
		return resp, err
	})}
	_, got, err := get(t, tr, s.URL)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GET = %d bytes, %v", len(got), err)
	}
	if sawUncompressed.Load() || !sawCoding.Load() {
		t.Errorf("base response: Uncompressed %v, Content-Encoding gzip %v; want false, true (Go's transparent gzip never ran)", sawUncompressed.Load(), sawCoding.Load())
	}
	if dt := http.DefaultTransport.(*http.Transport); dt.DisableCompression {
		t.Errorf("http.DefaultTransport was modified: DisableCompression = true")
	}
}

func TestTransportNoBodyResponses(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(204)
		case "/304":
			w.WriteHeader(304)
		default:
			w.Header().Set("Content-Length", "99999999")
			w.WriteHeader(200)
		}
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: 10}}
	for _, tt := range []struct{ method, path string }{{"HEAD", "/"}, {"GET", "/204"}, {"GET", "/304"}} {
		req, _ := http.NewRequest(tt.method, s.URL+tt.path, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Errorf("%s %s: %v, want the response", tt.method, tt.path, err)
			continue
		}
		resp.Body.Close()
		if u, done := boundhttp.UsageOf(resp); !done || u != (limits.Usage{}) {
			t.Errorf("%s %s: UsageOf = %v, %v; want zero, true", tt.method, tt.path, u, done)
		}
	}
}

func TestTransportPartialContentWithCoding(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Range", "bytes 0-9/100")
		w.WriteHeader(206)
		w.Write(encode("gzip", []byte("0123456789"))[:10])
	}))
	defer s.Close()
	_, _, err := get(t, &boundhttp.Transport{}, s.URL)
	if stageOf(err) != "encoding" {
		t.Errorf("GET 206 with Content-Encoding gzip: %v, want stage encoding", err)
	}
}

func TestTransportPerRequestBudget(t *testing.T) {
	t.Parallel()
	s := server(t, body{coding: "br", data: encode("br", text(100000))})
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1000}}
	c := &http.Client{Transport: tr}
	for _, tt := range []struct {
		ctx   context.Context
		stage string
	}{
		{context.Background(), "decoded"},
		{boundhttp.WithBudget(context.Background(), limits.Budget{MaxDecodedBytes: 100000}), ""},
		{boundhttp.WithBudget(context.Background(), limits.Budget{MaxDecodedBytes: 99999}), "decoded"},
		{boundhttp.WithBudget(context.Background(), limits.Budget{MaxDecodedBytes: -1}), "other: "},
	} {
		req, _ := http.NewRequestWithContext(tt.ctx, "GET", s.URL, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if got := stageOf(err); !strings.HasPrefix(got, tt.stage) || (tt.stage == "" && got != "") {
			t.Errorf("per-request budget %v: %v, want stage %q", tt.ctx, err, tt.stage)
		}
	}
}

func TestTransportStreaming(t *testing.T) {
	t.Parallel()
	const limit = 50000
	for _, c := range codings {
		for _, tt := range []struct {
			size  int
			stage string
		}{{limit, ""}, {limit + 1, "decoded"}} {
			s := server(t, body{coding: c, data: encode(c, text(tt.size)), chunked: true})
			tr := &boundhttp.Transport{Streaming: true, Budget: limits.Budget{MaxDecodedBytes: limit}}
			resp, err := (&http.Client{Transport: tr}).Get(s.URL)
			if err != nil {
				t.Fatalf("streaming GET %s: %v", c, err)
			}
			var n int
			buf := make([]byte, 1000)
			for {
				m, rerr := resp.Body.Read(buf)
				n += m
				if rerr != nil {
					err = rerr
					break
				}
			}
			if err == io.EOF {
				err = nil
			}
			if stageOf(err) != tt.stage || n > limit {
				t.Errorf("streaming %s of %d: read %d bytes, end %v; want at most %d, stage %q", c, tt.size, n, err, limit, tt.stage)
			}
			if tt.stage != "" {
				if _, again := resp.Body.Read(buf); again != err {
					t.Errorf("streaming %s: Read after breach = %v, want the same error", c, again)
				}
			}
			resp.Body.Close()
		}
	}
}

// TestTransportConcurrent runs good and hostile bodies through one
// Transport from many goroutines (meaningful under -race).
func TestTransportConcurrent(t *testing.T) {
	t.Parallel()
	good := text(20000)
	mux := http.NewServeMux()
	for _, c := range codings {
		mux.HandleFunc("/good/"+c, func(w http.ResponseWriter, r *http.Request) { serve(w, body{coding: c, data: encode(c, good)}) })
		bomb := encode(c, bytes.Repeat([]byte("b"), 2<<20))
		mux.HandleFunc("/bomb/"+c, func(w http.ResponseWriter, r *http.Request) { serve(w, body{coding: c, data: bomb}) })
	}
	s := httptest.NewServer(mux)
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	rounds := 10
	if testing.Short() {
		rounds = 3 // 8 goroutines still interleave good bodies and bombs of every coding
	}
	for g := range 8 {
		wg.Go(func() {
			for i := range rounds {
				c := codings[(g+i)%len(codings)]
				_, got, err := get(t, tr, s.URL+"/good/"+c)
				if err != nil || !bytes.Equal(got, good) {
					t.Errorf("good %s: %d bytes, %v", c, len(got), err)
				}
				if _, _, err := get(t, tr, s.URL+"/bomb/"+c); stageOf(err) != "decoded" {
					t.Errorf("bomb %s: %v, want stage decoded", c, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestTransportEventStreamIsStreamed: a server-sent event stream that the
// request asked for (Accept: text/event-stream, as MCP clients send) reaches
// the caller as it arrives, not after an end that never comes.
func TestTransportEventStreamIsStreamed(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer s.Close()
	defer close(release)
	req, _ := http.NewRequest("GET", s.URL, nil)
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := (&http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{Timeout: time.Minute}}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	if err != nil || string(buf[:n]) != "data: first\n\n" || resp.ContentLength != -1 {
		t.Errorf("event stream: read %q, %v, ContentLength %d; want the first event streamed", buf[:n], err, resp.ContentLength)
	}
}

// TestTransportPooledChunks: whole bodies are served from pooled chunks
// that return to the pool on Close; a closed body cannot be read, and an
// open body is never overwritten by the next one.
func TestTransportPooledChunks(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		serve(w, body{coding: "gzip", data: encode("gzip", bytes.Repeat([]byte{byte('a' + i)}, 300000))})
	}))
	defer s.Close()
	c := &http.Client{Transport: &boundhttp.Transport{}}
	fetch := func() *http.Response {
		resp, err := c.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first, second := fetch(), fetch()
	first.Body.Close()
	if _, err := first.Body.Read(make([]byte, 1)); err == nil {
		t.Errorf("Read after Close = nil error")
	}
	third := fetch() // may reuse the first body's chunks
	for i, resp := range []*http.Response{second, third} {
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := bytes.Repeat([]byte{byte('a' + 2 + i)}, 300000)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("body %d: %d bytes, %v; want %d bytes of %q", i+2, len(got), err, len(want), want[0])
		}
	}
}

// TestTransportInvalidConfigFailsBeforeSending (trap: configuration
// checked after I/O): a Transport with an invalid Budget, JSON or
// DecodeOptions fails every request before any byte leaves the process (the
// loopback server never sees the request, not even a POST's body), with the
// same error every time; a per-request budget from WithBudget is checked
// per request, also before sending. Sabotage: applying DecodeOptions only
// when the body is opened (as before) let the server receive and handle
// the POST, then returned the option's error.
func TestTransportInvalidConfigFailsBeforeSending(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer s.Close()
	for _, tt := range []struct {
		name string
		tr   *boundhttp.Transport
	}{
		{"negative budget", &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: -1}}},
		{"negative JSON limit", &boundhttp.Transport{JSON: &limits.JSON{MaxDepth: -1}}},
		{"negative WithMaxMembers", &boundhttp.Transport{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(-1)}}},
		{"MinInt WithMaxMembers", &boundhttp.Transport{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(math.MinInt)}}},
	} {
		var first error
		for i := range 3 {
			closed := false
			req, _ := http.NewRequest("POST", s.URL, &closeRecorder{Reader: strings.NewReader("payload"), closed: &closed})
			resp, err := tt.tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s: request %d succeeded", tt.name, i)
			}
			if i == 0 {
				first = err
			} else if err != first {
				t.Errorf("%s: request %d failed with %v, want the same error as the first (%v)", tt.name, i, err, first)
			}
			if !closed {
				t.Errorf("%s: the request body was not closed", tt.name)
			}
		}
		tt.tr.CloseIdleConnections()
	}
	// A valid Transport, a per-request budget that is not.
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	for _, b := range []limits.Budget{{MaxDecodedBytes: -1}, {MaxLayers: -1}, {MaxRatio: -1}} {
		req, _ := http.NewRequestWithContext(boundhttp.WithBudget(t.Context(), b), "POST", s.URL, strings.NewReader("payload"))
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Errorf("WithBudget(%+v): request succeeded, want the budget's error", b)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the server saw %d requests, want none", n)
	}
	// And the valid Transport still sends valid requests.
	req, _ := http.NewRequest("GET", s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := seen.Load(); n != 1 {
		t.Fatalf("the server saw %d requests, want 1", n)
	}
}

// closeRecorder is a request body that records its Close.
type closeRecorder struct {
	*strings.Reader
	closed *bool
}

func (c *closeRecorder) Close() error {
	*c.closed = true
	return nil
}

// TestTransportFieldsChangedAfterFirstUse (trap: a configuration checked
// once and read again unchecked): the Transport checks Budget and JSON at
// its first request. A field changed afterwards (the documentation forbids
// it, nothing prevents it), or a JSON limits value changed through the
// pointer the Transport was given, must never reach the decoder unchecked:
// a negative MaxWireBytes made the wire reader slice past its buffer (a
// panic), and a JSON checker whose Reset refused the changed limits kept the
// state of the previous body it checked. The Transport goes on with the
// configuration it checked.
func TestTransportFieldsChangedAfterFirstUse(t *testing.T) {
	t.Parallel()
	doc := []byte(`[[1,2],[3]]`)
	s := server(t, body{data: doc, chunked: true})
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		serve(w, body{data: doc, chunked: true})
	})
	for _, streaming := range []bool{false, true} {
		j := &limits.JSON{MaxDepth: 2}
		tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 100}, JSON: j, Streaming: streaming}
		get := func() ([]byte, error) {
			req, _ := http.NewRequest("GET", s.URL, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			return io.ReadAll(resp.Body)
		}
		if got, err := get(); err != nil || string(got) != string(doc) {
			t.Fatalf("streaming %v: first request: %q, %v", streaming, got, err)
		}
		tr.Budget.MaxWireBytes = -1
		tr.Budget.MaxDecodedBytes = -5
		j.MaxDepth = -1
		for i := range 3 {
			var got []byte
			var err error
			if readPanics(func() { got, err = get() }) {
				t.Fatalf("streaming %v: request %d after the change panicked", streaming, i)
			}
			if err != nil || string(got) != string(doc) {
				t.Errorf("streaming %v: request %d after the change: %q, %v; want the body, under the checked configuration", streaming, i, got, err)
			}
		}
		tr.CloseIdleConnections()
	}
}
