package boundhttp_test

import (
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
