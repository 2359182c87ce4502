package boundhttp_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestReadDoesNotAllocate: every Read is a hot path. The guard against
// Close during Read and the live usage record cost atomics, not
// allocations, in streaming and in whole-body mode.
func TestReadDoesNotAllocate(t *testing.T) {
	b := limits.Budget{MaxDecodedBytes: 16 << 20, MaxWireBytes: 16 << 20}
	for _, c := range []string{"identity", "gzip"} {
		s := server(t, body{coding: c, data: encode(c, text(8<<20))})
		for _, streaming := range []bool{true, false} {
			resp, err := (&http.Client{Transport: &boundhttp.Transport{Streaming: streaming, Budget: b}}).Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 1024)
			resp.Body.Read(buf) // the decoder's first Read sets it up
			if a := testing.AllocsPerRun(2000, func() { resp.Body.Read(buf) }); a != 0 {
				t.Errorf("%s, streaming %v: %v allocations per Read, want 0", c, streaming, a)
			}
			resp.Body.Close()
		}
	}
}

// TestTransportGigabyteBombHeap: a gzip body that decodes to 1 GiB, with a
// 1 MiB decoded limit, is rejected with a peak heap growth of a few MiB.
// The server compresses on the fly and stops when the client hangs up, so
// the test never holds the gigabyte either.
func TestTransportGigabyteBombHeap(t *testing.T) {
	zeros := make([]byte, 1<<20)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		for range 1024 { // 1 GiB decoded
			if _, err := zw.Write(zeros); err != nil {
				return
			}
		}
		zw.Close()
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	_, _, err := get(t, tr, s.URL)
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	if stageOf(err) != "decoded" {
		t.Fatalf("GET 1 GiB gzip bomb, limit 1 MiB: %v, want stage decoded", err)
	}
	growth := int64(peak) - int64(before.HeapAlloc)
	t.Logf("peak heap growth %d bytes; allocated in all %d bytes (client and server)", growth, after.TotalAlloc-before.TotalAlloc)
	if growth > 6<<20 {
		t.Errorf("peak heap growth %d bytes, want below 6 MiB", growth)
	}
}

// h2TLSServer starts an HTTP/2 server over TLS on loopback running h, and
// returns it with a base transport from NewBaseTransport that trusts it.
func h2TLSServer(t *testing.T, h http.Handler) (*httptest.Server, *http.Transport) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	base := boundhttp.NewBaseTransport()
	base.TLSClientConfig = s.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	base.ForceAttemptHTTP2 = true
	return s, base
}

// liveHeap samples the live heap until stop is called and returns the
// largest sample: every 20 ms it runs a garbage collection and reads
// runtime/metrics' /gc/heap/live:bytes (the heap that collection marked
// live), so that a sample never depends on when the runtime chose to
// collect.
func liveHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var peak uint64
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			runtime.GC()
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-exited
		return peak
	}
}

// TestHTTP2StreamWindowsBounded pins the trap of HTTP/2 stream buffers the
// in-flight budget does not see: 64 concurrent 4 MiB GETs over one HTTP/2
// connection with InFlight 16 MiB. Bodies waiting for room keep their
// stream's receive window filled by net/http, uncharged; the base
// transport's DefaultStreamWindow bounds that, so the live heap grows by at
// most Cap + 64 × DefaultStreamWindow + slack, and every body completes
// (admitted bodies are not starved by the waiting ones: the connection
// window is larger than what waiting streams can hold).
func TestHTTP2StreamWindowsBounded(t *testing.T) {
	streams := 64
	if testing.Short() {
		streams = 24
	}
	const size, capacity, slack = 4 << 20, 16 << 20, 16 << 20
	payload := []byte(strings.Repeat("x", size))
	s, base := h2TLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(payload)
	}))
	f := limits.NewInFlight(capacity)
	client := &http.Client{Transport: &boundhttp.Transport{Base: base, InFlight: f}}
	warm, err := client.Get(s.URL) // one connection, before the streams
	if err != nil || warm.ProtoMajor != 2 {
		t.Fatalf("warm-up: %v, %v; want HTTP/2", warm, err)
	}
	warm.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	before := liveHeap()()
	peak := liveHeap()
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			resp, err := client.Do(req)
			if err != nil {
				errs <- err
				return
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && n != size {
				err = io.ErrUnexpectedEOF
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	grew := int64(peak()) - int64(before)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
			if failed < 3 {
				t.Errorf("a fetch failed: %v", err)
			}
		}
	}
	bound := int64(capacity + streams*boundhttp.DefaultStreamWindow + slack)
	t.Logf("%d streams of %d MiB, InFlight %d MiB: live heap grew %.1f MiB (bound %.1f MiB), in-flight peak %.1f MiB, %d failed",
		streams, size>>20, capacity>>20, float64(grew)/(1<<20), float64(bound)/(1<<20), float64(f.Peak())/(1<<20), failed)
	if grew > bound {
		t.Errorf("live heap grew %d bytes, want at most Cap + %d × DefaultStreamWindow + %d = %d", grew, streams, slack, bound)
	}
}

// TestResponseHeaderBytesDefault pins the trap of response headers outside
// every budget: the base transport of a zero Transport (and
// NewBaseTransport) refuses a response whose header is over
// DefaultMaxResponseHeaderBytes, net/http's default being 10 MiB, on
// HTTP/1.1 and HTTP/2, and passes one just under it. net/http counts the
// header in its own units (with slop on HTTP/1, 32 bytes per field on
// HTTP/2), hence the 8 KiB on either side.
func TestResponseHeaderBytesDefault(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("X-Big", strings.Repeat("a", n))
		w.Write([]byte("ok"))
	})
	h1 := httptest.NewServer(h)
	defer h1.Close()
	h2, h2base := h2TLSServer(t, h)
	for _, tt := range []struct {
		name string
		url  string
		tr   *boundhttp.Transport
	}{
		{"HTTP/1.1, zero Transport", h1.URL, &boundhttp.Transport{}},
		{"HTTP/2, NewBaseTransport", h2.URL, &boundhttp.Transport{Base: h2base}},
	} {
		for _, c := range []struct {
			n    int
			pass bool
		}{
			{boundhttp.DefaultMaxResponseHeaderBytes - 8<<10, true},
			{boundhttp.DefaultMaxResponseHeaderBytes + 8<<10, false},
			{10 << 20 / 2, false},
		} {
			resp, err := (&http.Client{Transport: tt.tr}).Get(tt.url + "/?n=" + strconv.Itoa(c.n))
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != c.pass {
				t.Errorf("%s, %d-byte header: %v, want pass %v", tt.name, c.n, err, c.pass)
			}
		}
	}
}

// memBase answers every request from memory with the same gzip body, as a
// fresh response (RoundTrip changes its header and body): the
// allocations of a fetch through it are the Transport's and its own.
type memBase struct{ gz []byte }

type memBody struct{ strings.Reader }

func (*memBody) Close() error { return nil }

func (m *memBase) RoundTrip(req *http.Request) (*http.Response, error) {
	b := new(memBody)
	b.Reset(string(m.gz))
	return &http.Response{StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1, Request: req,
		Header:        http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"application/json"}},
		Body:          b,
		ContentLength: int64(len(m.gz))}, nil
}

// TestWholeFetchAllocations pins what a whole-body fetch costs the
// Transport beyond its base, in allocations: its round trip's state (1),
// the request's context (2) and trace (2), the outgoing request with its
// Accept-Encoding (4), the round trip's one timer (2), the codings' parse
// (none: on the stack), and the body ReadBody returns (1). The pooled
// decoder, chunks and list of chunks, and the body's deadline and watch
// (the round trip's timer; no context.AfterFunc for a context that cannot
// end) cost none.
func TestWholeFetchAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops objects at random under the race detector")
	}
	base := &memBase{gz: encode("gzip", text(4<<10))}
	tr := &boundhttp.Transport{Base: base}
	req, err := http.NewRequest("GET", "http://example.invalid/", nil)
	if err != nil {
		t.Fatal(err)
	}
	fetch := func() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		data, err := boundhttp.ReadBody(resp.Body)
		resp.Body.Close()
		if err != nil || len(data) != 4<<10 {
			t.Fatalf("read %d bytes, %v", len(data), err)
		}
	}
	fetch()
	own := testing.AllocsPerRun(200, func() {
		resp, _ := base.RoundTrip(req)
		resp.Body.Close()
	})
	const want = 11
	if got := testing.AllocsPerRun(200, fetch) - own; got > want {
		t.Errorf("a whole-body fetch allocated %v times beyond its base's %v, want at most %d", got, own, want)
	}
}
