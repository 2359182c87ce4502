package boundhttp_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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
