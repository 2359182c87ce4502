package boundhttp_test

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// brotliStall is the start of a standard brotli stream declaring a 16 MiB
// window and a 16 MiB uncompressed first meta-block: the brotli decoder
// allocates its 16 MiB ring buffer on the fourth byte.
func brotliStall() []byte { return append([]byte{0xCF, 0xFF, 0xFF, 0xFF}, "xxxxxxxx"...) }

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
	// A context that ended before the response headers came (a loaded
	// machine) proves nothing about the wait: that run is repeated with
	// twice the time.
	for wait := 100 * time.Millisecond; wait <= 6400*time.Millisecond; wait *= 2 {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
		_, err = c.Do(req)
		cancel()
		if errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	if !errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch while the budget is full: %v, want ErrBusy and DeadlineExceeded", err)
	}
}

// TestInFlightOptionLeavesNoChargeAfterHandler (trap: two ways to give one
// budget, and only one of them ends the charge): a streaming handler that
// never closes its body leaves InUse at 0 once it returns, whether the
// budget came as MiddlewareConfig.InFlight or as decoding.WithInFlight in
// DecodeOptions. Sabotage: ending the body's life only when the InFlight
// field is set (as before) left InUse at 65536 after every gzip request
// through the option.
func TestInFlightOptionLeavesNoChargeAfterHandler(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(4096))
	for _, way := range []string{"field", "option"} {
		f := limits.NewInFlight(1 << 20)
		c := boundhttp.MiddlewareConfig{Streaming: true}
		if way == "field" {
			c.InFlight = f
		} else {
			c.DecodeOptions = []decoding.Option{decoding.WithInFlight(f)}
		}
		returned := make(chan struct{}, 1)
		h := mustMW(t, c)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var buf [512]byte
			r.Body.Read(buf[:]) // starts the decoder, which is charged; never closed
			returned <- struct{}{}
		}))
		for range 3 {
			req := httptest.NewRequest("POST", "/", strings.NewReader(string(gz)))
			req.Header.Set("Content-Encoding", "gzip")
			h.ServeHTTP(httptest.NewRecorder(), req)
			<-returned
			if got := f.InUse(); got != 0 {
				t.Fatalf("%s: InUse() = %d after the handler returned, want 0", way, got)
			}
		}
		if f.Peak() == 0 {
			t.Fatalf("%s: nothing was charged", way)
		}
	}
}

// TestTransportInFlightOptionWaitsLikeField: on the Transport a budget
// given by decoding.WithInFlight in DecodeOptions behaves exactly as the
// InFlight field: a body that finds the budget full waits for room until
// the request's context ends (then fails with ErrBusy wrapping the
// context's error); with room it is charged until Close. Sabotage: letting
// only the InFlight field wait (as before) made the option's request fail
// at once with ErrBusy and no DeadlineExceeded.
func TestTransportInFlightOptionWaitsLikeField(t *testing.T) {
	t.Parallel()
	data := text(64 << 10)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	for _, way := range []string{"field", "option"} {
		f := limits.NewInFlight(1 << 20)
		tr := &boundhttp.Transport{}
		if way == "field" {
			tr.InFlight = f
		} else {
			tr.DecodeOptions = []decoding.Option{decoding.WithInFlight(f)}
		}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		full := inflight.NewHold(inflight.Of(f))
		full.Grow(f.Cap())

		// Full for good: the body waits until its context ends. A context
		// that ended before the response headers came (a loaded machine)
		// proves nothing about the wait: that run is repeated with twice
		// the time.
		var err error
		for wait := 200 * time.Millisecond; wait <= 6400*time.Millisecond; wait *= 2 {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			_, err = c.Do(req)
			cancel()
			if errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
				break
			}
		}
		if !errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: fetch while the budget is full = %v, want ErrBusy wrapping DeadlineExceeded (a wait)", way, err)
		}

		// With room, the body is charged until it is closed.
		full.Release()
		req, _ := http.NewRequest("GET", s.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: fetch once room is given back = %v", way, err)
		}
		got, _ := io.ReadAll(resp.Body)
		if f.InUse() == 0 || string(got) != string(data) {
			t.Errorf("%s: body of %d bytes, InUse %d while open; want the body, charged", way, len(got), f.InUse())
		}
		resp.Body.Close()
		if got := f.InUse(); got != 0 {
			t.Errorf("%s: InUse() = %d after Close, want 0", way, got)
		}
	}
}

// TestTwoInFlightBudgetsRefused: the InFlight field and a
// decoding.WithInFlight option naming another budget cannot both hold: the
// configuration is refused (by NewMiddleware, and by the Transport before
// any request is sent) instead of one of them being ignored. The same
// budget given both ways is accepted.
func TestTwoInFlightBudgetsRefused(t *testing.T) {
	t.Parallel()
	a, b := limits.NewInFlight(1<<20), limits.NewInFlight(1<<20)
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlight: a,
		DecodeOptions: []decoding.Option{decoding.WithInFlight(b)}}); err == nil {
		t.Errorf("NewMiddleware with two in-flight budgets = nil error, want one")
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlight: a,
		DecodeOptions: []decoding.Option{decoding.WithInFlight(a)}}); err != nil {
		t.Errorf("NewMiddleware with one budget given both ways = %v", err)
	}
	sent := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++ }))
	defer s.Close()
	tr := &boundhttp.Transport{InFlight: a, DecodeOptions: []decoding.Option{decoding.WithInFlight(b)}}
	req, _ := http.NewRequest("GET", s.URL, nil)
	if _, err := tr.RoundTrip(req); err == nil || sent != 0 {
		t.Errorf("Transport with two in-flight budgets: %v, %d requests sent; want an error and none", err, sent)
	}
}

// TestTransportInFlightPaths: the Transport's paths that no other test
// walks with an InFlight give back everything: HEAD, 204, 304, a redirect
// (whose body http.Client reads a little of and closes), a JSON shape
// breach, a Content-Length over the limit (refused before the body is
// read), Fetch, Preview, and streaming bodies closed unread or early.
func TestTransportInFlightPaths(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(512<<10))
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/redirect":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Location", "/gz")
			w.WriteHeader(http.StatusFound)
			w.Write(gz)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, deep)
		case "/big":
			w.Header().Set("Content-Length", "100000000")
			w.Write(text(1 << 10))
		default:
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz)
		}
	}))
	defer s.Close()
	f := limits.NewInFlight(16 << 20)
	b := limits.Budget{MaxDecodedBytes: 1 << 20}
	whole := &boundhttp.Transport{Budget: b, InFlight: f, JSON: &limits.JSON{MaxDepth: 10}}
	stream := &boundhttp.Transport{Budget: b, InFlight: f, Streaming: true}
	defer whole.CloseIdleConnections()
	defer stream.CloseIdleConnections()
	wc, sc := &http.Client{Transport: whole}, &http.Client{Transport: stream}
	check := func(what string) {
		t.Helper()
		if f.InUse() != 0 || f.Peak() > f.Cap() {
			t.Fatalf("%s: InUse() = %d, Peak() = %d, want 0 and within %d", what, f.InUse(), f.Peak(), f.Cap())
		}
	}
	do := func(c *http.Client, method, path string) *http.Response {
		req, _ := http.NewRequest(method, s.URL+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			return nil
		}
		return resp
	}
	for _, c := range []*http.Client{wc, sc} {
		for _, tt := range []struct{ method, path string }{
			{"HEAD", "/gz"}, {"GET", "/204"}, {"GET", "/304"}, {"GET", "/redirect"}, {"GET", "/json"}, {"GET", "/big"},
		} {
			if resp := do(c, tt.method, tt.path); resp != nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			check(tt.method + " " + tt.path)
		}
	}
	if resp := do(wc, "GET", "/gz"); resp == nil || f.InUse() < 512<<10 {
		t.Fatalf("a whole gzip body: InUse() = %d while held, want at least its size", f.InUse())
	} else {
		resp.Body.Close()
	}
	check("whole body closed unread")
	if resp := do(sc, "GET", "/gz"); resp != nil {
		resp.Body.Close()
	}
	check("streaming body closed unread")
	if resp := do(sc, "GET", "/gz"); resp != nil {
		io.CopyN(io.Discard, resp.Body, 1000)
		if f.InUse() < 64<<10 {
			t.Errorf("streaming gzip body being read: InUse() = %d, want its decoder's state", f.InUse())
		}
		resp.Body.Close()
	}
	check("streaming body closed early")
	req, _ := http.NewRequest("GET", s.URL+"/gz", nil)
	if r := boundhttp.Fetch(wc, req); r.Status != boundhttp.StatusComplete {
		t.Errorf("Fetch: %+v", r.Status)
	}
	check("Fetch")
	req, _ = http.NewRequest("GET", s.URL+"/gz", nil)
	if r := boundhttp.Preview(wc, req, 100); r.Status != boundhttp.StatusPreview {
		t.Errorf("Preview: %+v", r.Status)
	}
	check("Preview")
	if f.Peak() == 0 {
		t.Fatal("Peak() = 0: nothing was charged")
	}
}

// gzipBomb returns a valid gzip member of size zero bytes, built in
// milliseconds: one DEFLATE segment that decodes to 1 MiB of zeros from a
// history of zeros, repeated.
func gzipBomb(size int64) []byte {
	const seg = 1 << 20
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, seg)
	zw.Write(zeros[:64<<10])
	zw.Flush()
	prefix := bytes.Clone(buf.Bytes())
	buf.Reset()
	zw.Write(zeros)
	zw.Flush()
	segment := bytes.Clone(buf.Bytes())
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, prefix...)
	n := int64(64 << 10)
	for ; n+seg <= size; n += seg {
		out = append(out, segment...)
	}
	out = append(out, 0x03, 0x00) // a final, empty fixed-Huffman block
	crc := crc32.NewIEEE()
	for left := n; left > 0; left -= seg {
		crc.Write(zeros[:min(left, seg)])
	}
	out = binary.LittleEndian.AppendUint32(out, crc.Sum32())
	return binary.LittleEndian.AppendUint32(out, uint32(n))
}

// heapSampler samples the bytes of heap objects every millisecond.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(h.done)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// perConnection is the heap one loopback connection of this test may
// hold besides what the in-flight budget charges: net/http's buffers and
// structures on the server side (about 16 KiB, see the Middleware doc) and
// on the client side, both in this process, and the echo handler's copy of
// a valid body.
const perConnection = 64 << 10

// slack is the heap that is neither charged nor per connection: idle chunks
// and decoders in sync.Pools (reused, never more than were charged at once)
// and garbage not yet collected (GC percent 10 during the test). Measured
// growth over the budget: 0 to 15 MiB on two shared cores.
const slack = 16 << 20

// TestMiddlewareInFlightAttack: against a Middleware with a 64 MiB
// in-flight budget, 64 concurrent 1 GiB gzip bombs, 64 brotli streams
// declaring a 16 MiB window, and 64 connections that send 12 bytes of such
// a stream and stall, while 200 valid requests are made. Peak heap growth
// stays under the budget plus perConnection per connection; every valid
// request gets its exact answer or a 503 with Retry-After. The heap is
// sampled through runtime/metrics every millisecond. Sabotage: the
// same load without InFlight (set attackInFlight false) grows the heap by
// more than 1 GiB (64 ring buffers of 16 MiB) and fails. Under the race
// detector there are 16 of each attacker and 50 valid requests.
func TestMiddlewareInFlightAttack(t *testing.T) {
	const budget = 64 << 20
	attackers, nvalid := 64, 200
	if raceEnabled {
		attackers, nvalid = 16, 50 // the full load takes 30 s under -race on two shared cores
	}
	f := limits.NewInFlight(budget)
	cfg := boundhttp.MiddlewareConfig{
		Budget: limits.Budget{MaxDecodedBytes: 1 << 20, Timeout: time.Second},
	}
	if attackInFlight {
		cfg.InFlight = f
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		io.WriteString(w, sum(b))
	})
	s := httptest.NewServer(mustMW(t, cfg)(echo))
	defer s.Close()
	addr := s.Listener.Addr().String()

	bomb := gzipBomb(1 << 30)
	brStream := append(brotliStall(), bytes.Repeat([]byte("x"), 2<<20)...)
	valid := make([][]byte, nvalid)
	for i := range valid {
		valid[i] = []byte(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("v", 1+i*97%(32<<10))))
	}

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapObjects()
	h := sampleHeap()

	attack := &http.Transport{DisableKeepAlives: true, MaxConnsPerHost: 0}
	defer attack.CloseIdleConnections()
	var wg sync.WaitGroup
	var statuses sync.Map
	count := func(kind string, code int) {
		v, _ := statuses.LoadOrStore(fmt.Sprint(kind, " ", code), new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
	}
	for range attackers {
		wg.Go(func() { count("gzip bomb", postRaw(attack, s.URL, "gzip", bomb)) })
		wg.Go(func() { count("br 16 MiB window", postRaw(attack, s.URL, "br", brStream)) })
		wg.Go(func() {
			head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nContent-Encoding: br\r\n\r\n"
			line := sendRaw(addr, head, brotliStall(), 0)
			code := 0
			fmt.Sscanf(line, "HTTP/1.1 %d", &code)
			count("br stall", code)
		})
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 16}}
	var ok, busy atomic.Int32
	jobs := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range jobs {
				ce := ""
				if i%2 == 1 {
					ce = "gzip"
				}
				req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(encode(ce, valid[i])))
				req.Header.Set("Content-Type", "application/json")
				if ce != "" {
					req.Header.Set("Content-Encoding", ce)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("valid request %d lost: %v", i, err)
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					t.Errorf("valid request %d: reading the answer: %v", i, err)
				case resp.StatusCode == 200 && string(got) == sum(valid[i]):
					ok.Add(1)
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
					busy.Add(1)
				default:
					t.Errorf("valid request %d answered %d %q, want 200 %q or 503 with Retry-After", i, resp.StatusCode, got, sum(valid[i]))
				}
			}
		})
	}
	for i := range valid {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	peak := h.Stop()
	client.CloseIdleConnections()

	growth := int64(peak) - int64(base)
	conns := int64(3*attackers + 16)
	bound := int64(budget) + conns*perConnection + slack
	statuses.Range(func(k, v any) bool { t.Logf("%s: %d", k, v.(*atomic.Int32).Load()); return true })
	t.Logf("valid: %d exact, %d busy; heap growth %.1f MiB (bound %.1f MiB); Peak() %.1f MiB of %.0f MiB",
		ok.Load(), busy.Load(), float64(growth)/(1<<20), float64(bound)/(1<<20), float64(f.Peak())/(1<<20), float64(budget)/(1<<20))
	if ok.Load()+busy.Load() != int32(len(valid)) {
		t.Errorf("%d valid requests answered, want %d", ok.Load()+busy.Load(), len(valid))
	}
	if growth > bound {
		t.Errorf("peak heap growth %d bytes, want at most %d (budget %d + %d connections x %d + slack %d)", growth, bound, budget, conns, perConnection, slack)
	}
	if attackInFlight {
		waitInUse(t, f, "attack")
		if f.Peak() == 0 {
			t.Errorf("Peak() = 0: nothing was charged")
		}
	}
}

// attackInFlight is false only to show the test failing without InFlight.
const attackInFlight = true

// postRaw posts body and returns the status, or 0 if the request failed
// (the server may close while the body is still being sent).
func postRaw(tr http.RoundTripper, url, ce string, body []byte) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Encoding", ce)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestLazyRedirectBodyGivesBackInFlight: a redirect body verified lazily
// holds its InFlight charge only while it is held: followed by http.Client,
// read by a caller who stopped at the redirect, or closed unread, the charge
// goes back.
func TestLazyRedirectBodyGivesBackInFlight(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/final")
		serve(w, body{coding: "zstd", data: encode("zstd", text(300000)), status: http.StatusFound})
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "final") })
	s := httptest.NewServer(mux)
	defer s.Close()
	f := limits.NewInFlight(64 << 20)
	tr := &boundhttp.Transport{InFlight: f}
	defer tr.CloseIdleConnections()
	stop := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		name   string
		client *http.Client
		read   bool
	}{{"followed", &http.Client{Transport: tr}, true}, {"read", stop, true}, {"closed unread", stop, false}} {
		resp, err := tt.client.Get(s.URL + "/redirect")
		if err != nil {
			t.Fatal(err)
		}
		if tt.read {
			io.ReadAll(resp.Body)
		}
		resp.Body.Close()
		if n := f.InUse(); n != 0 {
			t.Errorf("redirect %s: InUse() = %d after Close, want 0", tt.name, n)
		}
	}
}

// TestReadBodyInFlight: ReadBody hands the body's bytes to the caller, so
// their in-flight charge ends with it; Close then has nothing to give back
// and InUse stays at 0.
func TestReadBodyInFlight(t *testing.T) {
	t.Parallel()
	for _, size := range []int{300, 200 << 10} {
		data := text(size)
		s := server(t, body{coding: "gzip", data: encode("gzip", data)})
		f := limits.NewInFlight(8 << 20)
		tr := &boundhttp.Transport{InFlight: f}
		resp, err := (&http.Client{Transport: tr}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if f.InUse() == 0 {
			t.Errorf("%d bytes: nothing charged before ReadBody", size)
		}
		got, err := boundhttp.ReadBody(resp.Body)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: ReadBody = %d bytes, %v", size, len(got), err)
		}
		if n := f.InUse(); n != 0 {
			t.Errorf("%d bytes: InUse after ReadBody = %d; want 0", size, n)
		}
		resp.Body.Close()
		if n := f.InUse(); n != 0 {
			t.Errorf("%d bytes: InUse after Close = %d; want 0", size, n)
		}
		tr.CloseIdleConnections()
	}
}

// TestReadBodyInFlightHandler: a handler that takes its request body with
// ReadBody (whole, or the rest after a partial Read) ends the body's charge
// there, and nothing is charged once the request is done.
func TestReadBodyInFlightHandler(t *testing.T) {
	t.Parallel()
	for _, size := range []int{300, 200 << 10} {
		for _, skip := range []int{0, 100} {
			data := text(size)
			f := limits.NewInFlight(8 << 20)
			type seen struct {
				before, after int64
				ok            bool
			}
			out := make(chan seen, 1)
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlight: f})
			if err != nil {
				t.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				before := f.InUse()
				head := make([]byte, skip)
				_, err := io.ReadFull(r.Body, head)
				got, err2 := boundhttp.ReadBody(r.Body)
				out <- seen{before, f.InUse(), err == nil && err2 == nil && bytes.Equal(append(head, got...), data)}
			}))
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(encode("gzip", data)))
			req.Header.Set("Content-Encoding", "gzip")
			h.ServeHTTP(httptest.NewRecorder(), req)
			s := <-out
			if !s.ok || s.before == 0 || s.after != 0 || f.InUse() != 0 {
				t.Errorf("%d bytes, skip %d: body ok %v, InUse before/after ReadBody %d/%d, after the request %d; want true, >0/0, 0",
					size, skip, s.ok, s.before, s.after, f.InUse())
			}
		}
	}
}

// TestInFlightWaitCutByDeadlineIsTimeout pins the trap of a deadline that
// net/http-style code cannot see: a body that waits for room in InFlight
// until the request's deadline fails with a *limits.Error of stage
// inflight wrapping context.DeadlineExceeded, and its Timeout method
// (asked first by errors.As, and by *url.Error through ResponseError)
// reported false, the deadline it wraps unseen. A wait ended by a cancel,
// and a size rejection, are no timeouts.
func TestInFlightWaitCutByDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1000))
	}))
	defer s.Close()
	tr := &boundhttp.Transport{InFlight: limits.NewInFlight(1500)}
	held, err := tr.RoundTrip(newGet(t, s.URL)) // 1000 of 1500, until the end
	if err != nil {
		t.Fatal(err)
	}
	defer held.Body.Close()
	// A context that ended before the response headers came (a loaded
	// machine) proves nothing about the wait: that run is repeated with
	// twice the time.
	for wait := 200 * time.Millisecond; wait <= 6400*time.Millisecond; wait *= 2 {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
		_, err = (&http.Client{Transport: tr}).Do(req)
		cancel()
		if errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
			break
		}
	}
	var le *limits.Error
	if !errors.As(err, &le) || le.Stage != limits.StageInFlight || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch that waits past its deadline: %v, want an inflight rejection wrapping the deadline", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("inflight wait cut by the deadline, through http.Client: Timeout false, want true (%v)", err)
	}
	for _, c := range []struct {
		err  *limits.Error
		want bool
	}{
		{&limits.Error{Stage: limits.StageInFlight, Err: context.DeadlineExceeded}, true},
		{&limits.Error{Stage: limits.StageInFlight, Err: context.Canceled}, false},
		{&limits.Error{Stage: limits.StageDecoded}, false},
		{&limits.Error{Stage: limits.StageTimeout}, true},
	} {
		if got := c.err.Timeout(); got != c.want {
			t.Errorf("%v (cause %v): Timeout %v, want %v", c.err.Stage, c.err.Err, got, c.want)
		}
	}
}

// TestStackedTransportsShareOneCharge pins the trap of two layers on one
// InFlight waiting on each other: a Transport whose Base is another
// Transport on the same budget read the inner Transport's verified body
// again, and waited for room that only the inner body's charge, which the
// outer one held open, could free. A 600 KiB body under a 1 MiB budget hung
// until the request's deadline. The outer layer takes the inner verified
// body over, charging nothing twice, and applies only what its budget holds
// stricter: a tighter MaxDecodedBytes, MaxWireBytes or MaxDecodedRunes, a
// JSON check of its own, still rejects, and every charge ends.
func TestStackedTransportsShareOneCharge(t *testing.T) {
	t.Parallel()
	data := []byte(`"` + strings.Repeat("x", 600<<10) + `"`)
	gz := encode("gzip", data)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz)
	}))
	defer s.Close()
	f := limits.NewInFlight(1 << 20)
	inner := &boundhttp.Transport{InFlight: f}
	defer inner.CloseIdleConnections()
	n, wire := int64(len(data)), int64(len(gz))
	for _, c := range []struct {
		name  string
		outer *boundhttp.Transport
		stage limits.Stage // "" when the body is accepted
	}{
		{"same budget", &boundhttp.Transport{}, ""},
		{"streaming outer", &boundhttp.Transport{Streaming: true}, ""},
		{"decoded limit", &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: n}}, ""},
		{"decoded limit-1", &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: n - 1}}, limits.StageDecoded},
		{"wire limit", &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: wire}}, ""},
		{"wire limit-1", &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: wire - 1}}, limits.StageWire},
		{"characters limit", &boundhttp.Transport{Budget: limits.Budget{MaxDecodedRunes: n}}, ""},
		{"characters limit-1", &boundhttp.Transport{Budget: limits.Budget{MaxDecodedRunes: n - 1}}, limits.StageRunes},
		{"ratio", &boundhttp.Transport{Budget: limits.Budget{MaxRatio: 10}}, limits.StageRatio},
		{"json", &boundhttp.Transport{JSON: &limits.JSON{MaxStringLen: 1 << 10}}, limits.StageJSON},
	} {
		outer := c.outer
		outer.Base, outer.InFlight = inner, f // set before first use
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
		start := time.Now()
		resp, err := outer.RoundTrip(req)
		if c.stage != "" {
			var le *limits.Error
			if !errors.As(err, &le) || le.Stage != c.stage {
				t.Errorf("%s: %v, want stage %s", c.name, err, c.stage)
			}
			if err == nil {
				resp.Body.Close()
			}
		} else if err != nil {
			t.Errorf("%s: %v after %v, want the body", c.name, err, time.Since(start))
		} else {
			got, err := io.ReadAll(resp.Body)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s: read %d bytes, %v; want %d bytes", c.name, len(got), err, len(data))
			}
			if u, done := boundhttp.UsageOf(resp); !done || u.DecodedBytes != n {
				t.Errorf("%s: UsageOf = %v, %v; want %d decoded bytes, verified", c.name, u, done, n)
			}
			if used := f.InUse(); used > 2*n {
				t.Errorf("%s: InUse() = %d while the body is held, want one charge (at most %d)", c.name, used, 2*n)
			}
			resp.Body.Close()
		}
		cancel()
		if used := f.InUse(); used != 0 {
			t.Errorf("%s: InUse() = %d after the body ended, want 0", c.name, used)
		}
	}
}
