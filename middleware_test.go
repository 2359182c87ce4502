package boundhttp_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

func TestMiddlewareDecodedBoundary(t *testing.T) {
	t.Parallel()
	const limit = 30000
	s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxDecodedBytes: limit, MaxWireBytes: 1 << 20}})
	for _, c := range codings {
		for _, chunked := range []bool{false, true} {
			for _, tt := range []struct {
				size   int
				status int
			}{{1, 200}, {limit - 1, 200}, {limit, 200}, {limit + 1, 413}, {4 * limit, 413}} {
				data := text(tt.size)
				status, answer := post(t, s.URL, c, encode(c, data), chunked)
				if status != tt.status {
					t.Errorf("POST %s body of %d (chunked %v), limit %d: status %d, want %d (%s)", c, tt.size, chunked, limit, status, tt.status, answer)
					continue
				}
				if status == 200 && answer != okAnswer(data) {
					t.Errorf("POST %s body of %d: handler saw %s, want %s", c, tt.size, answer, okAnswer(data))
				}
				if status == 413 {
					p := problem(t, answer)
					// A zstd frame that declares its size is rejected from its header.
					if p.Stage != "decoded" || p.Limit != limit || (p.Observed != limit+1 && !(p.Declared && p.Observed == int64(tt.size))) || p.Status != 413 {
						t.Errorf("POST %s body of %d: problem %+v, want stage decoded, limit %d, observed %d", c, tt.size, p, limit, limit+1)
					}
					if strings.Contains(answer, string(data[:20])) {
						t.Errorf("POST %s: the rejection contains body bytes: %s", c, answer)
					}
				}
			}
		}
	}
}

func TestMiddlewareWireBoundary(t *testing.T) {
	t.Parallel()
	for _, c := range codings {
		wire := encode(c, text(20000))
		n := int64(len(wire))
		for _, chunked := range []bool{false, true} {
			for _, tt := range []struct {
				limit  int64
				status int
			}{{n - 1, 413}, {n, 200}, {n + 1, 200}} {
				s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: tt.limit}})
				status, answer := post(t, s.URL, c, wire, chunked)
				if status != tt.status {
					t.Errorf("POST %s of %d wire bytes (chunked %v), wire limit %d: %d, want %d", c, n, chunked, tt.limit, status, tt.status)
				}
				if status == 413 {
					if p := problem(t, answer); p.Stage != "wire" || p.Limit != tt.limit {
						t.Errorf("POST %s: problem %+v, want stage wire, limit %d", c, p, tt.limit)
					}
				}
			}
		}
	}
}

// TestMiddlewareExpectContinue: an oversized declared length is answered
// 413 without "100 Continue", so the client never sends the body, and the
// handler is not called.
func TestMiddlewareExpectContinue(t *testing.T) {
	t.Parallel()
	var called bool
	s := httptest.NewServer(boundhttp.Middleware(limits.Budget{MaxWireBytes: 1000})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called = true
	})))
	defer s.Close()
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\nExpect: 100-continue\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 413 || called {
		t.Errorf("Expect: 100-continue with Content-Length 1001, limit 1000: status %d, handler called %v; want 413 and not called", resp.StatusCode, called)
	}
	if resp.Header.Get("Content-Type") != "application/problem+json" || !resp.Close {
		t.Errorf("answer: Content-Type %q, Close %v; want problem+json and a closed connection", resp.Header.Get("Content-Type"), resp.Close)
	}
}

func TestMiddlewareRejections(t *testing.T) {
	t.Parallel()
	s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}})
	gz := encode("gzip", text(50000))
	corrupt := append([]byte(nil), gz...)
	corrupt[len(corrupt)-8] ^= 1
	tests := []struct {
		name, coding string
		data         []byte
		status       int
		stage        string
	}{
		{"gzip bomb", "gzip", encode("gzip", bytes.Repeat([]byte("b"), 8<<20)), 413, "decoded"},
		{"br bomb", "br", encode("br", bytes.Repeat([]byte("b"), 8<<20)), 413, "decoded"},
		{"zstd bomb", "zstd", encode("zstd", bytes.Repeat([]byte("b"), 8<<20)), 413, "decoded"},
		{"deflate bomb", "deflate", encode("deflate", bytes.Repeat([]byte("b"), 8<<20)), 413, "decoded"},
		{"two-layer bomb", "gzip, gzip", testencLayered(bytes.Repeat([]byte("b"), 8<<20), "gzip", "gzip"), 413, "decoded"},
		{"three layers", "gzip, gzip, gzip", testencLayered([]byte("b"), "gzip", "gzip", "gzip"), 413, "layers"},
		{"truncated", "gzip", gz[:len(gz)-5], 400, "integrity"},
		{"corrupt checksum", "gzip", corrupt, 400, "integrity"},
		{"trailing bytes", "gzip", append(append([]byte(nil), gz...), "xx"...), 400, "integrity"},
		{"unsupported", "compress", []byte("abc"), 415, "encoding"},
	}
	for _, tt := range tests {
		status, answer := post(t, s.URL, tt.coding, tt.data, false)
		if status != tt.status {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, status, tt.status, answer)
			continue
		}
		if p := problem(t, answer); string(p.Stage) != tt.stage || p.Status != tt.status || p.Type != "urn:boundhttp:problem:"+tt.stage {
			t.Errorf("%s: problem %+v, want stage %s", tt.name, p, tt.stage)
		}
	}
	// 415 names what is accepted.
	req, _ := http.NewRequest("POST", s.URL, strings.NewReader("abc"))
	req.Header.Set("Content-Encoding", "compress")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("Accept-Encoding"), "zstd, br, gzip, deflate, identity"; got != want {
		t.Errorf("415 Accept-Encoding = %q, want %q", got, want)
	}
	// A rejection closes the connection rather than drain the rest, even
	// where net/http would drain a small remainder and keep it.
	if !resp.Close {
		t.Errorf("415 answer: Close = false, want the connection closed")
	}
}

func TestMiddlewareCodingsConfig(t *testing.T) {
	t.Parallel()
	s := echoServer(t, boundhttp.MiddlewareConfig{Codings: []string{"gzip"}})
	if status, _ := post(t, s.URL, "gzip", encode("gzip", []byte("hi")), false); status != 200 {
		t.Errorf("gzip with Codings [gzip]: %d, want 200", status)
	}
	if status, _ := post(t, s.URL, "br", encode("br", []byte("hi")), false); status != 415 {
		t.Errorf("br with Codings [gzip]: %d, want 415", status)
	}
	none := echoServer(t, boundhttp.MiddlewareConfig{Codings: []string{}})
	if status, _ := post(t, none.URL, "gzip", encode("gzip", []byte("hi")), false); status != 415 {
		t.Errorf("gzip with Codings []: %d, want 415", status)
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Codings: []string{"compress"}}); err == nil {
		t.Errorf("NewMiddleware(Codings [compress]) = nil error, want one")
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: -1}}); err == nil {
		t.Errorf("NewMiddleware(negative budget) = nil error, want one")
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Middleware(negative budget) did not panic")
		}
	}()
	boundhttp.Middleware(limits.Budget{MaxDecodedBytes: -1})
}

// TestMiddlewareStreamingErrors: a handler reading in streaming mode gets an
// error that matches both *limits.Error and *http.MaxBytesError.
func TestMiddlewareStreamingErrors(t *testing.T) {
	t.Parallel()
	type result struct {
		n          int
		limitsErr  *limits.Error
		maxBytes   *http.MaxBytesError
		tooLarge   bool
		sticky     bool
		contentLen int64
	}
	got := make(chan result, 1)
	mw, _ := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxDecodedBytes: 10000}})
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		var res result
		res.n, res.contentLen = len(data), r.ContentLength
		errors.As(err, &res.limitsErr)
		errors.As(err, &res.maxBytes)
		res.tooLarge = errors.Is(err, limits.ErrTooLarge)
		_, again := r.Body.Read(make([]byte, 1))
		res.sticky = again == err && err != nil
		got <- res
		if res.maxBytes != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge) // the classic MaxBytesReader handler
		}
	})))
	defer s.Close()
	status, _ := post(t, s.URL, "zstd", encode("zstd", text(10001)), true)
	res := <-got
	if status != 413 || res.limitsErr == nil || res.limitsErr.Stage != limits.StageDecoded || res.maxBytes == nil || res.maxBytes.Limit != 10000 || !res.tooLarge || !res.sticky {
		t.Errorf("streaming breach: status %d, %+v; want 413, *limits.Error stage decoded, *http.MaxBytesError limit 10000, sticky", status, res)
	}
	if res.n > 10000 || res.contentLen != -1 {
		t.Errorf("streaming: handler read %d bytes, ContentLength %d; want at most 10000, -1", res.n, res.contentLen)
	}
	// The handler that does not answer: the middleware does.
	s2 := echoServer(t, boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxDecodedBytes: 10000}})
	status, answer := post(t, s2.URL, "br", encode("br", text(20000)), false)
	if status != 413 || problem(t, answer).Stage != "decoded" {
		t.Errorf("streaming breach, silent handler: %d %s, want 413 stage decoded", status, answer)
	}
	data := text(10000)
	status, answer = post(t, s2.URL, "br", encode("br", data), false)
	if status != 200 || !strings.HasPrefix(answer, fmt.Sprintf("%x %d -1", sha256.Sum256(data), len(data))) {
		t.Errorf("streaming at the limit: %d %s, want 200 with the body", status, answer)
	}
}

func TestMiddlewarePerRouteBudget(t *testing.T) {
	t.Parallel()
	s := echoServer(t, boundhttp.MiddlewareConfig{BudgetFor: func(r *http.Request) limits.Budget {
		switch r.URL.Path {
		case "/upload":
			return limits.Budget{MaxDecodedBytes: 1 << 20}
		case "/broken":
			return limits.Budget{MaxDecodedBytes: -5}
		}
		return limits.Budget{MaxDecodedBytes: 1000}
	}})
	data := encode("gzip", text(50000))
	for _, tt := range []struct {
		path   string
		status int
	}{{"/upload", 200}, {"/tool", 413}, {"/broken", 500}} {
		if status, answer := post(t, s.URL+tt.path, "gzip", data, false); status != tt.status {
			t.Errorf("POST %s: %d, want %d (%s)", tt.path, status, tt.status, answer)
		}
	}
}

// TestMiddlewareDoesNotMutateRequest: the handler gets a copy; the request
// the server handed to the middleware keeps its header, body and length.
func TestMiddlewareDoesNotMutateRequest(t *testing.T) {
	t.Parallel()
	var outer, inner *http.Request
	var outerHeader http.Header
	var outerBody io.ReadCloser
	var outerLen int64
	var after string
	h := boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner = r
		io.Copy(io.Discard, r.Body)
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outer, outerHeader, outerBody, outerLen = r, r.Header.Clone(), r.Body, r.ContentLength
		h.ServeHTTP(w, r)
		after = fmt.Sprint(r.Header)
	}))
	defer s.Close()
	post(t, s.URL, "gzip", encode("gzip", text(5000)), false)
	if inner == outer || inner == nil {
		t.Fatalf("handler got the caller's *http.Request")
	}
	if after != fmt.Sprint(outerHeader) || outer.Body != outerBody || outer.ContentLength != outerLen {
		t.Errorf("the caller's request changed: header %s (was %v), body changed %v, length %d (was %d)", after, outerHeader, outer.Body != outerBody, outer.ContentLength, outerLen)
	}
	if inner.Header.Get("Content-Encoding") != "" || inner.ContentLength != 5000 {
		t.Errorf("handler's request: Content-Encoding %q, ContentLength %d; want none, 5000", inner.Header.Get("Content-Encoding"), inner.ContentLength)
	}
	if u, done := boundhttp.UsageOf(inner); !done || u.DecodedBytes != 5000 {
		t.Errorf("UsageOf = %v, %v; want 5000 decoded, done", u, done)
	}
}

func TestMiddlewareLogsRejections(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxDecodedBytes: 100}, Logger: slog.New(rec)})
	secret := []byte("SECRET-BODY-CONTENT " + strings.Repeat("z", 200))
	post(t, s.URL, "", secret, false)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.recs) != 1 {
		t.Fatalf("%d log records, want 1", len(rec.recs))
	}
	attrs := map[string]string{}
	rec.recs[0].Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
	if attrs["stage"] != "decoded" || attrs["limit"] != "100" || attrs["observed"] != "101" || attrs["route"] != "/" || rec.recs[0].Level != slog.LevelWarn {
		t.Errorf("log record %v %v, want stage decoded, limit 100, observed 101, route /", rec.recs[0].Message, attrs)
	}
	if strings.Contains(fmt.Sprint(attrs, rec.recs[0].Message), "SECRET") {
		t.Errorf("the log record holds body bytes: %v", attrs)
	}
}

// TestMiddlewareAuditsToolSchemas: schemas that disagree with the budget are
// logged at start-up, naming the tool and the numbers.
func TestMiddlewareAuditsToolSchemas(t *testing.T) {
	t.Parallel()
	rec := &logRecorder{}
	_, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget: limits.Budget{MaxWireBytes: 64 << 10, MaxDecodedBytes: 64 << 10},
		Logger: slog.New(rec),
		ToolSchemas: map[string]json.RawMessage{
			"ok":      json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"q":{"type":"string","maxLength":100}}}`),
			"toobig":  json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"q":{"type":"string","maxLength":100000}}}`),
			"nolimit": json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"ids":{"type":"array","items":{"type":"integer"}}}}`),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, r := range rec.recs {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "tool" || a.Key == "err" {
				got = append(got, a.Value.String())
			}
			return true
		})
	}
	text := strings.Join(got, " | ")
	if len(rec.recs) != 2 || !strings.Contains(text, "nolimit") || !strings.Contains(text, "array without maxItems") ||
		!strings.Contains(text, "toobig") || !strings.Contains(text, "65536") || strings.Contains(text, `"ok"`) {
		t.Errorf("start-up warnings: %d records: %s; want nolimit and toobig (naming 65536), not ok", len(rec.recs), text)
	}
}

// TestRouteInLogIsPatternWhenKnown pins what the log's route is: the
// ServeMux pattern when the middleware sits inside the mux, or wraps it in
// streaming mode (the pattern is known after the handler ran), else the
// path.
func TestRouteInLogIsPatternWhenKnown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		streaming bool
		inside    bool
		want      string
	}{
		{"inside the mux", false, true, "POST /tools/{name}"},
		{"around the mux, streaming", true, false, "POST /tools/{name}"},
		{"around the mux, whole body", false, false, "/tools/x"},
	} {
		var logs bytes.Buffer
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
			Budget: limits.Budget{MaxWireBytes: 10}, Streaming: tt.streaming,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body) })
		mux := http.NewServeMux()
		if tt.inside {
			mux.Handle("POST /tools/{name}", mw(h))
			h = mux
		} else {
			mux.Handle("POST /tools/{name}", h)
			h = mw(mux)
		}
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/tools/x", struct{ io.Reader }{strings.NewReader(strings.Repeat("a", 100))})
		h.ServeHTTP(w, req)
		var rec map[string]any
		json.Unmarshal(logs.Bytes(), &rec)
		if w.Code != 413 || rec["route"] != tt.want || req.Pattern != "" && !tt.inside {
			t.Errorf("%s: status %d, route %v (request's Pattern %q); want 413, %q", tt.name, w.Code, rec["route"], req.Pattern, tt.want)
		}
	}
}

// TestRequestBodyErrorMaxBytesOnlyForByteStages pins that a JSON depth (or
// any other count) is never reported as a *http.MaxBytesError, whose Limit
// is a number of bytes.
func TestRequestBodyErrorMaxBytesOnlyForByteStages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		stage limits.Stage
		want  bool
	}{
		{limits.StageWire, true},
		{limits.StageDecoded, true},
		{limits.StageJSON, false},
		{limits.StageLayers, false},
		{limits.StageWindow, false},
		{limits.StageRunes, false},
		{limits.StageRatio, false},
		{limits.StageIntegrity, false},
		{limits.StageTimeout, false},
	} {
		err := error(&boundhttp.RequestBodyError{Err: &limits.Error{Stage: tt.stage, Limit: 2, Observed: 3}})
		var mbe *http.MaxBytesError
		got := errors.As(err, &mbe)
		if got != tt.want || (got && mbe.Limit != 2) {
			t.Errorf("stage %s: errors.As *http.MaxBytesError %v (%v), want %v", tt.stage, got, mbe, tt.want)
		}
		var le *limits.Error
		if !errors.As(err, &le) || le.Stage != tt.stage {
			t.Errorf("stage %s: errors.As *limits.Error %v", tt.stage, le)
		}
	}
}

// TestConfigErrorsAtConstruction pins the trap of a configuration error
// that surfaces per request: an invalid decoding option fails
// NewMiddleware, not every POST.
func TestConfigErrorsAtConstruction(t *testing.T) {
	t.Parallel()
	_, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(-1)}})
	if err == nil {
		t.Error("NewMiddleware with decoding.WithMaxMembers(-1): no error")
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(3)}}); err != nil {
		t.Errorf("NewMiddleware with decoding.WithMaxMembers(3): %v", err)
	}
}

// TestInvalidBudgetForLoggedWithoutLogger pins that an invalid per-route
// budget is logged, as the doc says, when no Logger is set: to
// slog.Default. Not parallel: it swaps slog.Default.
func TestInvalidBudgetForLoggedWithoutLogger(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		BudgetFor: func(*http.Request) limits.Budget { return limits.Budget{MaxWireBytes: -1} },
	})
	if err != nil {
		t.Fatal(err)
	}
	called := false
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/tool", strings.NewReader("x")))
	if w.Code != 500 || called || !strings.Contains(logs.String(), "invalid per-route budget") {
		t.Errorf("invalid BudgetFor budget, no Logger: status %d, handler called %v, slog.Default got %q; want 500, not called, logged", w.Code, called, logs.String())
	}
}

// TestBreachWrittenAfterTimeoutHandlerReturned (trap: the rejection of a
// streaming body read unsynchronised by serve): http.TimeoutHandler returns
// its 503 while the handler inside it still runs, and that handler may
// still be reading its body. The Middleware then asks the body for its
// breach while that Read records one. Run under -race: the breach must be
// handed over between goroutines, and the in-flight charge of the Read
// still in progress must come back once it returns.
func TestBreachWrittenAfterTimeoutHandlerReturned(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(1 << 20)
	mw := mustMW(t, boundhttp.MiddlewareConfig{Streaming: true, InFlight: f,
		Budget: limits.Budget{MaxDecodedBytes: 100}})
	for round := range 20 {
		finished := make(chan error, 1)
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // TimeoutHandler gave up: it is returning
			_, err := io.ReadAll(r.Body)
			finished <- err
		})
		h := mw(http.TimeoutHandler(inner, time.Nanosecond, "timeout"))
		req := httptest.NewRequest("POST", "/", bytes.NewReader(encode("gzip", text(4096))))
		req.Header.Set("Content-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the inner handler never finished reading", round)
		}
		if got := f.InUse(); got != 0 {
			t.Fatalf("round %d: InUse() = %d after the inner handler's Read returned, want 0", round, got)
		}
	}
}

// A Content-Encoding whose names name no coding (empty, commas, identity in
// any case) leaves the body and the handler's header as sent, length
// included; empty names around a real coding are skipped, and the coding is
// removed from the body and from the header. A peer chooses these values.
func TestCodingNamesThatNameNoCoding(t *testing.T) {
	data := []byte("hello, world")
	var got string
	srv := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		got = fmt.Sprintf("body %q, err %v, Content-Encoding %q, Content-Length %q (%d)",
			b, err, r.Header.Values("Content-Encoding"), r.Header.Values("Content-Length"), r.ContentLength)
	})))
	defer srv.Close()
	for _, tt := range []struct {
		lines []string
		gzip  bool
		want  string
	}{
		{[]string{""}, false, `body "hello, world", err <nil>, Content-Encoding [""], Content-Length ["12"] (12)`},
		{[]string{", ,"}, false, `body "hello, world", err <nil>, Content-Encoding [", ,"], Content-Length ["12"] (12)`},
		{[]string{"identity"}, false, `body "hello, world", err <nil>, Content-Encoding ["identity"], Content-Length ["12"] (12)`},
		{[]string{"IDENTITY", ""}, false, `body "hello, world", err <nil>, Content-Encoding ["IDENTITY" ""], Content-Length ["12"] (12)`},
		{[]string{",gzip,"}, true, `body "hello, world", err <nil>, Content-Encoding [], Content-Length ["12"] (12)`},
		{[]string{"", " GZIP "}, true, `body "hello, world", err <nil>, Content-Encoding [], Content-Length ["12"] (12)`},
		{[]string{"identity, gzip"}, true, `body "hello, world", err <nil>, Content-Encoding [], Content-Length ["12"] (12)`},
	} {
		body := data
		if tt.gzip {
			body = testencLayered(data, "gzip")
		}
		req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader(body))
		for _, l := range tt.lines {
			req.Header.Add("Content-Encoding", l)
		}
		got = "handler not called"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || got != tt.want {
			t.Errorf("Content-Encoding %q: status %d, handler got %s\nwant 200, %s", tt.lines, resp.StatusCode, got, tt.want)
		}
	}
}

// TestZeroLengthRequestIsNoBodyOnEveryProtocol pins the trap "a verdict
// that depends on the protocol" on the server: a request declaring a
// length of 0 with a coding the Middleware cannot decode reached the handler
// as an empty body over HTTP/1.1 (net/http gives it http.NoBody) and was
// answered 415 over HTTP/2. A length of 0 is no body on both, whatever the
// codings, as on the client (TestZeroLengthIsNoBodyOnEveryProtocol). Found by
// the generated exchanges (internal/property, server side, seed 1). Sabotage:
// without the length check in serve the HTTP/2 row is answered 415.
func TestZeroLengthRequestIsNoBodyOnEveryProtocol(t *testing.T) {
	t.Parallel()
	h := mustMW(t, boundhttp.MiddlewareConfig{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v", len(b), err)
	}))
	for _, h2 := range []bool{false, true} {
		s := httptest.NewUnstartedServer(h)
		tr := &http.Transport{Protocols: new(http.Protocols)}
		if h2 {
			s.Config.Protocols = new(http.Protocols)
			s.Config.Protocols.SetUnencryptedHTTP2(true)
			tr.Protocols.SetUnencryptedHTTP2(true)
		} else {
			tr.Protocols.SetHTTP1(true)
		}
		s.Start()
		req, _ := http.NewRequest("POST", s.URL, strings.NewReader(""))
		req.Header.Set("Content-Encoding", "x-unknown")
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(got) != "0 <nil>" {
			t.Errorf("HTTP/2 %v: a length of 0 with an unknown coding: %d %q, want 200 \"0 <nil>\"", h2, resp.StatusCode, got)
		}
		tr.CloseIdleConnections()
		s.Close()
	}
}
