package boundhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

var (
	codings = testenc.Codings
	encode  = testenc.Encode
	text    = testenc.Text
)

var stageOf = testenc.StageOf

var cpuPerOp = testenc.CPUPerOp

// body describes a response a test server sends.
type body struct {
	coding  string // Content-Encoding; "" for none
	data    []byte // the bytes on the wire
	chunked bool   // no Content-Length; flushed in pieces
	status  int
}

// serve writes b: with a Content-Length, or chunked.
func serve(w http.ResponseWriter, b body) {
	if b.coding != "" && b.coding != "identity" {
		w.Header().Set("Content-Encoding", b.coding)
	}
	if !b.chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(b.data)))
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if !b.chunked {
		w.Write(b.data)
		return
	}
	f := w.(http.Flusher)
	for p := b.data; len(p) > 0; {
		n := min(len(p), 1000)
		w.Write(p[:n])
		f.Flush()
		p = p[n:]
	}
}

// server returns a test server that answers every request with b.
func server(t *testing.T, b body) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, b) }))
	t.Cleanup(s.Close)
	return s
}

var testencLayered = testenc.Layered

// get fetches url through a client using tr, and returns the whole body.
func get(t *testing.T, tr http.RoundTripper, url string) (*http.Response, []byte, error) {
	t.Helper()
	c := &http.Client{Transport: tr}
	resp, err := c.Get(url)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp, data, err
}

// rawServer answers each connection by writing resp verbatim, then holding
// the connection open until the test ends.
func rawServer(t *testing.T, resp string) string {
	t.Helper()
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	return testenc.RawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, resp)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	})
}

// countingTransport counts the body bytes read through it per path.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	read map[string]int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, c: c, path: r.URL.Path}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	c    *countingTransport
	path string
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.read[b.path] += int64(n)
	b.c.mu.Unlock()
	return n, err
}

// rtFunc adapts a function to http.RoundTripper.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// echoServer runs the middleware in front of a handler that answers with the
// SHA-256 and length of the body it got.
func echoServer(t *testing.T, cfg boundhttp.MiddlewareConfig) *httptest.Server {
	t.Helper()
	mw, err := boundhttp.NewMiddleware(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			var le *limits.Error
			if errors.As(err, &le) {
				return // streaming: the middleware answers
			}
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintf(w, "%x %d %d %q", sha256.Sum256(data), len(data), r.ContentLength, r.Header.Get("Content-Encoding"))
	})))
	t.Cleanup(s.Close)
	return s
}

// post sends data with the given Content-Encoding, with a Content-Length or
// chunked, and returns the status and the answer.
func post(t *testing.T, url, coding string, data []byte, chunked bool) (int, string) {
	t.Helper()
	var rd io.Reader = bytes.NewReader(data)
	if chunked {
		rd = struct{ io.Reader }{rd} // unknown length: Transfer-Encoding chunked
	}
	req, _ := http.NewRequest("POST", url, rd)
	if coding != "" && coding != "identity" {
		req.Header.Set("Content-Encoding", coding)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", coding, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func okAnswer(data []byte) string {
	return fmt.Sprintf("%x %d %d %q", sha256.Sum256(data), len(data), len(data), "")
}

// problem decodes an RFC 9457 answer.
func problem(t *testing.T, s string) boundhttp.Problem {
	t.Helper()
	var p boundhttp.Problem
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		t.Fatalf("answer is not problem+json: %v: %q", err, s)
	}
	return p
}

// logRecorder keeps slog records.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.recs = append(l.recs, r.Clone())
	l.mu.Unlock()
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

// waitInUse waits until f holds nothing (handlers finish after their
// responses were sent) and fails the test if it does not within 5s.
func waitInUse(t *testing.T, f *limits.InFlight, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.InUse() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: InUse() = %d, want 0", what, f.InUse())
		}
		time.Sleep(time.Millisecond)
	}
	if f.Peak() > f.Cap() {
		t.Fatalf("%s: Peak() = %d > Cap() = %d", what, f.Peak(), f.Cap())
	}
}

func mustMW(t testing.TB, c boundhttp.MiddlewareConfig) func(http.Handler) http.Handler {
	t.Helper()
	m, err := boundhttp.NewMiddleware(c)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sum is the answer of the echo handler: length and SHA-256 of the body.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return fmt.Sprintf("%d %s", len(b), hex.EncodeToString(h[:]))
}

// concurrently runs op b.N times in all from n goroutines. Unlike
// b.RunParallel, whose goroutine count is a multiple of GOMAXPROCS, it runs
// exactly n concurrent clients.
func concurrently(b *testing.B, n int, op func() error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	b.ResetTimer()
	defer cpuPerOp(b)()
	for range n {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := op(); err != nil {
					once.Do(func() { b.Error(err) })
					return
				}
			}
		})
	}
	wg.Wait()
}

// bsize names a benchmark body size.
func bsize(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

const brotliStaticModule = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"

var needTool = testenc.NeedTool

// compressFile writes name.ext next to name with a command-line encoder.
func compressFile(t *testing.T, tool string, args ...string) {
	t.Helper()
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", tool, args, err, out)
	}
}

// startNginx serves dir with gzip_static and brotli_static on a loopback
// port, from a temporary configuration, and returns its base URL.
func startNginx(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(brotliStaticModule); err != nil {
		needTool(t, "nginx")
		if os.Getenv("CI") != "" {
			t.Fatalf("%s missing; .ci/run must install libnginx-mod-http-brotli-static", brotliStaticModule)
		}
		t.Skipf("%s missing; skipping", brotliStaticModule)
	}
	return runNginx(t, "load_module "+brotliStaticModule+";", fmt.Sprintf(`
		root %s;
		gzip_static on;
		brotli_static on;`, dir))
}

// runNginx starts nginx on a loopback port with one server block holding
// server; see [testenc.Nginx].
func runNginx(t *testing.T, modules, server string) string {
	t.Helper()
	return testenc.Nginx(t, modules, server)
}

// proxyBudget is the Middleware's budget behind the proxy tests: a 512 KiB
// wire and decoded limit, under nginx's client_max_body_size of 4m.
var proxyBudget = limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 512 << 10}

// rawConnServer answers each connection with f, after reading its request.
func rawConnServer(t *testing.T, f func(c net.Conn, r *http.Request)) string {
	t.Helper()
	return testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if r != nil {
			f(conn, r)
		}
	})
}

// problemOf decodes a problem document, or returns the zero Problem.
func problemOf(s string) boundhttp.Problem {
	var p boundhttp.Problem
	json.Unmarshal([]byte(s), &p)
	return p
}

// rawExchange writes req as is and returns the answer's status and body.
func rawExchange(t *testing.T, addr, req string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", req, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// summary describes r for a test message, without its body.
func summary(r boundhttp.Result) string {
	s := fmt.Sprintf("status %s, complete %v, HTTP %d, %d body bytes", r.Status, r.Complete, r.HTTPStatus, len(r.Body)+len(r.BodyBase64))
	if r.Rejection != nil {
		s += fmt.Sprintf(", rejected at %s", r.Rejection.Stage)
	}
	if r.Error != "" {
		s += ", error " + r.Error
	}
	return s
}

// writePlan is what a test handler writes behind a response cap.
type writePlan struct {
	n         int    // body bytes to write: text(n)
	piece     int    // bytes per Write; 0: one Write
	cl        int    // Content-Length to declare; 0: none
	header    bool   // WriteHeader(200) before the body
	flushAt   int    // flush once this many bytes were written; 0: never
	readFrom  bool   // write through io.ReaderFrom (of a reader without WriteTo)
	file      string // with readFrom: after flushAt bytes, read this file (sendfile)
	goroutine bool   // write from a goroutine the handler waits for
}

// planHandler writes plans[i] for path /i and sends the errors its writes
// returned (nil ones dropped) to errs before it returns.
func planHandler(plans []writePlan, errs chan<- []error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{i}", func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.PathValue("i"))
		p := plans[i]
		var got []error
		keep := func(err error) {
			if err != nil {
				got = append(got, err)
			}
		}
		write := func() {
			if p.cl > 0 {
				w.Header().Set("Content-Length", strconv.Itoa(p.cl))
			}
			if p.header {
				w.WriteHeader(http.StatusOK)
			}
			data := text(p.n)
			if p.readFrom {
				if p.flushAt > 0 {
					_, err := w.Write(data[:p.flushAt])
					keep(err)
					keep(http.NewResponseController(w).Flush())
					data = data[p.flushAt:]
				}
				var src io.Reader = struct{ io.Reader }{bytes.NewReader(data)}
				if p.file != "" {
					f, err := os.Open(p.file)
					if err != nil {
						panic(err)
					}
					defer f.Close()
					src = f
				}
				// Through ReadFrom where the writer has it (not on
				// HTTP/2), else through Writes of what a ReadFrom
				// reads at a time.
				var err error
				if rf, ok := w.(io.ReaderFrom); ok {
					_, err = rf.ReadFrom(src)
				} else {
					_, err = io.CopyBuffer(w, src, make([]byte, 4096))
				}
				keep(err)
			} else {
				piece := p.piece
				if piece == 0 {
					piece = max(p.n, 1)
				}
				for off := 0; off < p.n; {
					end := min(off+piece, p.n)
					if off < p.flushAt && p.flushAt < end {
						end = p.flushAt
					}
					_, err := w.Write(data[off:end])
					keep(err)
					if end == p.flushAt {
						keep(http.NewResponseController(w).Flush())
					}
					off = end
				}
			}
			if len(got) > 0 {
				_, err := w.Write([]byte("x")) // a later write
				keep(err)
			}
		}
		if p.goroutine {
			var wg sync.WaitGroup
			wg.Go(write)
			wg.Wait()
		} else {
			write()
		}
		errs <- got
	})
	return mux
}

// cappedServer serves plans behind a middleware with MaxResponseBytes
// limit, over HTTP/1.1, or HTTP/2 with TLS.
func cappedServer(t *testing.T, limit int64, h2 bool, plans []writePlan, log *slog.Logger) (*httptest.Server, chan []error) {
	t.Helper()
	return cappedServerBy(t, false, limit, h2, plans, log)
}

// cappedServerBy is cappedServer with the cap of the Middleware or, alone,
// the cap of ResponseCap.
func cappedServerBy(t *testing.T, alone bool, limit int64, h2 bool, plans []writePlan, log *slog.Logger) (*httptest.Server, chan []error) {
	t.Helper()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: limit, Logger: log})
	if alone {
		mw, err = boundhttp.NewResponseCap(boundhttp.ResponseCapConfig{MaxBytes: limit, Logger: log})
	}
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan []error, 1)
	s := httptest.NewUnstartedServer(mw(planHandler(plans, errs)))
	if h2 {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, errs
}

// wantStageResponse checks that the handler's write errors all match the
// response stage, and that when breached there are two: the write that
// passed the cap and a later one.
func wantStageResponse(t *testing.T, name string, errs []error, breached bool) {
	t.Helper()
	if breached && len(errs) < 2 || !breached && len(errs) > 0 {
		t.Errorf("%s: handler's write errors %v; want the breaching write's and a later one's: %v", name, errs, breached)
	}
	for _, err := range errs {
		var le *limits.Error
		if !errors.Is(err, limits.ErrTooLarge) || !errors.As(err, &le) || le.Stage != limits.StageResponse {
			t.Errorf("%s: handler's write error %v (%T), want a *limits.Error of stage response", name, err, err)
		}
	}
}

// aborted is the capCase status of a response that must end in an error.
const aborted = 0

// capCase is a writePlan behind a cap of limit, and what a client gets.
type capCase struct {
	name     string
	limit    int64
	plan     writePlan
	status   int   // 200 with the bytes written, 500 with a problem, or aborted
	observed int64 // the problem's
	declared bool  // the problem's
}

// checkCapped serves tt over HTTP/1.1 or HTTP/2 and checks what a client
// gets: never a clean end when aborted.
func checkCapped(t *testing.T, h2 bool, tt capCase) {
	t.Helper()
	checkCappedBy(t, false, h2, tt)
}

// checkCappedBy is checkCapped with the cap of the Middleware or, alone,
// the cap of ResponseCap.
func checkCappedBy(t *testing.T, alone bool, h2 bool, tt capCase) {
	t.Helper()
	tt.name = map[bool]string{false: "HTTP/1.1 ", true: "HTTP/2 "}[h2] + map[bool]string{true: "ResponseCap "}[alone] + tt.name
	s, errs := cappedServerBy(t, alone, tt.limit, h2, []writePlan{tt.plan}, slog.New(&logRecorder{}))
	resp, err := s.Client().Get(s.URL + "/0")
	if err == nil && h2 && resp.ProtoMajor != 2 {
		t.Fatalf("%s: the client spoke %s", tt.name, resp.Proto)
	}
	var got []byte
	if err == nil {
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	herrs := <-errs
	switch tt.status {
	case aborted:
		if err == nil {
			t.Errorf("%s: %d bytes, status %d, clean end; want an error", tt.name, len(got), resp.StatusCode)
		}
		wantStageResponse(t, tt.name, herrs, true)
	case 200:
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, text(tt.plan.n)) {
			t.Errorf("%s: %v, %d bytes; want 200 with the %d bytes written", tt.name, err, len(got), tt.plan.n)
			return
		}
		if tt.plan.cl > 0 && resp.ContentLength != int64(tt.plan.cl) {
			t.Errorf("%s: Content-Length %d, want %d", tt.name, resp.ContentLength, tt.plan.cl)
		}
		wantStageResponse(t, tt.name, herrs, false)
	case 500:
		if err != nil || resp.StatusCode != 500 {
			t.Errorf("%s: %v %v, want 500", tt.name, err, resp)
			return
		}
		p := problem(t, string(got))
		if p.Stage != "response" || p.Status != 500 || p.Limit != tt.limit || p.Observed != tt.observed || p.Declared != tt.declared {
			t.Errorf("%s: problem %+v, want stage response, limit %d, observed %d, declared %v", tt.name, p, tt.limit, tt.observed, tt.declared)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q, want application/problem+json", tt.name, ct)
		}
		wantStageResponse(t, tt.name, herrs, tt.plan.n > 0)
	}
}

// trapServer serves h behind a response cap of limit over HTTP/1.1, logging
// to rec.
func trapServer(t *testing.T, limit int64, h http.HandlerFunc, rec *logRecorder) *httptest.Server {
	t.Helper()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: limit, Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(h))
	t.Cleanup(s.Close)
	return s
}

// readPanics reports whether f panicked.
func readPanics(f func()) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	f()
	return false
}

func newGet(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// stalledPost is a client that sends the headers of a POST to path on s,
// declaring contentLength body bytes, then only the first few, and waits
// for the answer, 8 s at most. It returns the answer with its body read,
// the time from the send to the answer's headers, and the connection,
// closed once the answer was read (the client leaves: a read still blocked
// on it returns, and the server's Close does not wait for it); what fails
// the test names the case as what.
func stalledPost(t *testing.T, what string, s *httptest.Server, path string, contentLength int) (*http.Response, []byte, time.Duration, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nfirst bytes", path, contentLength)
	c.SetReadDeadline(start.Add(8 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("%s: no answer after %v (%v)", what, elapsed, err)
	}
	answer, _ := io.ReadAll(resp.Body)
	return resp, answer, elapsed, c
}
