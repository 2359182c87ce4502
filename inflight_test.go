package boundhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// brotliStall is the start of a standard brotli stream declaring a 16 MiB
// window and a 16 MiB uncompressed first meta-block: the brotli decoder
// allocates its 16 MiB ring buffer on the fourth byte.
func brotliStall() []byte { return append([]byte{0xCF, 0xFF, 0xFF, 0xFF}, "xxxxxxxx"...) }

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

// sendRaw writes a request head and body bytes on a new connection, then
// reads whatever answer comes until EOF or the deadline; it reports the
// status line, if any.
func sendRaw(addr, head string, body []byte, stall time.Duration) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, head)
	c.Write(body)
	if stall < 0 {
		return "" // the client goes away
	}
	time.Sleep(stall)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err.Error()
	}
	return strings.TrimSpace(line)
}

// TestMiddlewareInFlightReleased: after every kind of request (good,
// truncated, bombs, timeouts, client gone, handler panic), whole-body and
// streaming, the budget is back to 0, and Peak never exceeds Cap.
// Sabotage: without the deferred d.Done() in the middleware, streaming
// bodies and handler panics keep their charge and the test fails.
func TestMiddlewareInFlightReleased(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(32 << 20)
	b := limits.Budget{MaxDecodedBytes: 256 << 10, Timeout: 300 * time.Millisecond}
	data := text(32 << 10)
	bomb := encode("gzip", make([]byte, 8<<20))
	good, over := map[string][]byte{}, map[string][]byte{}
	for _, c := range []string{"", "gzip", "br", "zstd", "deflate"} {
		good[c], over[c] = encode(c, data), encode(c, text(300<<10))
	}
	for _, streaming := range []bool{false, true} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/panic" {
				io.CopyN(io.Discard, r.Body, 10)
				panic(http.ErrAbortHandler)
			}
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				return // the middleware answers
			}
			fmt.Fprint(w, n)
		})
		s := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{Budget: b, InFlight: f, Streaming: streaming})(h))
		addr := s.Listener.Addr().String()
		name := fmt.Sprintf("streaming=%v", streaming)
		post := func(path, ce string, body []byte) {
			req, _ := http.NewRequest("POST", s.URL+path, bytes.NewReader(body))
			if ce != "" {
				req.Header.Set("Content-Encoding", ce)
			}
			resp, err := s.Client().Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		var wg sync.WaitGroup
		for _, c := range []string{"", "gzip", "br", "zstd", "deflate"} {
			enc := good[c]
			head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nContent-Encoding: %s\r\n\r\n", len(enc), c)
			wg.Go(func() { post("/", c, enc) })                                          // good
			wg.Go(func() { post("/", c, over[c]) })                                      // over the decoded limit
			wg.Go(func() { post("/panic", c, enc) })                                     // handler panic
			wg.Go(func() { sendRaw(addr, head, enc[:len(enc)/2], -1) })                  // client gone
			wg.Go(func() { sendRaw(addr, head, enc[:len(enc)/2], 50*time.Millisecond) }) // timeout
		}
		wg.Go(func() { post("/", "gzip", bomb) })
		wg.Go(func() {
			head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nContent-Encoding: br\r\n\r\n"
			if got := sendRaw(addr, head, brotliStall(), 0); !strings.Contains(got, " 408 ") && !strings.Contains(got, " 503 ") {
				t.Errorf("%s: brotli stall answered %q, want 408 (timeout) or 503 (busy)", name, got)
			}
		})
		wg.Wait()
		waitInUse(t, f, name)
		s.Close()
	}
	if f.Peak() == 0 {
		t.Fatalf("Peak() = 0: nothing was charged")
	}
}

// TestMiddlewareInFlightBusy: a body that finds no room is answered 503
// with Retry-After and the problem document, without calling the handler;
// with InFlightWait it waits for room instead.
func TestMiddlewareInFlightBusy(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(1 << 20)
	hold := inflight.NewHold(inflight.Of(f))
	hold.Grow(1 << 20)
	called := false
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true })
	s := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{InFlight: f})(h))
	defer s.Close()
	resp, err := s.Client().Post(s.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || called ||
		!strings.Contains(string(doc), `"stage":"inflight"`) {
		t.Fatalf("busy: %d, Retry-After %q, handler called %v, %s; want 503 with Retry-After and the problem",
			resp.StatusCode, resp.Header.Get("Retry-After"), called, doc)
	}
	ws := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{InFlight: f, InFlightWait: 5 * time.Second})(h))
	defer ws.Close()
	time.AfterFunc(50*time.Millisecond, hold.Release)
	resp, err = ws.Client().Post(ws.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !called {
		t.Fatalf("with InFlightWait: %d, handler called %v; want 200 after the wait", resp.StatusCode, called)
	}
	waitInUse(t, f, "busy")
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlightWait: -1}); err == nil {
		t.Errorf("NewMiddleware(InFlightWait -1) = nil error, want one")
	}
}

// TestTransportInFlightWaits: 64 concurrent whole-body fetches of 8 MiB
// through one Transport with a 32 MiB in-flight budget all succeed: they
// wait for room, and each body is charged until it is closed. Under the
// race detector the bodies are 1 MiB and the budget 4 MiB (the same
// ratio): 512 MiB through -race on two shared cores takes minutes. Sabotage:
// without the wait (the body's first reservation not waiting) most fail
// with ErrBusy; without the chunks' charge (chunk.List.Charge) it ends before Close and the
// held-while-open check fails.
func TestTransportInFlightWaits(t *testing.T) {
	t.Parallel()
	size := 8 << 20
	if raceEnabled {
		size = 1 << 20
	}
	data := text(size)
	s := server(t, body{data: data})
	f := limits.NewInFlight(4 * int64(size))
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: int64(size), MaxDecodedBytes: int64(size)}, InFlight: f}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				errs <- err
				return
			}
			if f.InUse() < int64(size) {
				errs <- fmt.Errorf("InUse() = %d while an 8 MiB body is held, want at least %d", f.InUse(), size)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Equal(got, data) {
				errs <- fmt.Errorf("body: %d bytes, %v", len(got), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if f.InUse() != 0 || f.Peak() > f.Cap() || f.Peak() < 2*int64(size) {
		t.Fatalf("InUse() = %d, Peak() = %d, want 0 and within [%d, %d]", f.InUse(), f.Peak(), 2*size, f.Cap())
	}
	t.Logf("Peak() = %d of %d", f.Peak(), f.Cap())

	// A body that could never fit fails at once, and one whose context
	// ends while it waits fails with the context's error.
	tiny := &boundhttp.Transport{Budget: tr.Budget, InFlight: limits.NewInFlight(int64(size) / 2)}
	defer tiny.CloseIdleConnections()
	_, err := (&http.Client{Transport: tiny}).Get(s.URL)
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageInFlight || e.Observed <= e.Limit {
		t.Fatalf("a body through a budget of half its size: %v, want an inflight error that could never fit", err)
	}
	h := inflight.NewHold(inflight.Of(f))
	h.Grow(f.Cap())
	defer h.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
	_, err = c.Do(req)
	if !errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch while the budget is full: %v, want ErrBusy and DeadlineExceeded", err)
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
