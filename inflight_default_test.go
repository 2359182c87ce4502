package boundhttp_test

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestDefaultMiddlewareBoundsStalledBrotli pins the trap of per-body limits
// without a process-wide one: 32 connections that each send the start of a
// brotli stream declaring a 16 MiB window, far enough to have earned their
// bound (260 KiB: the server reads 1/128 of a body's bound before it
// decodes), and stall make a server allocate a ring buffer each, whatever
// its body limit. A Middleware configured with nothing but a Budget is
// charged to DefaultServerInFlight, so at most DefaultInFlightBytes is held
// and the rest are answered 503 at once. Not parallel: the default budget
// is process-wide, and this test fills it.
func TestDefaultMiddlewareBoundsStalledBrotli(t *testing.T) {
	f := boundhttp.DefaultServerInFlight()
	if f.Cap() != boundhttp.DefaultInFlightBytes {
		t.Fatalf("DefaultServerInFlight().Cap() = %d, want %d", f.Cap(), boundhttp.DefaultInFlightBytes)
	}
	mw := boundhttp.Middleware(limits.Budget{})
	s := httptest.NewServer(mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	defer s.Close()
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{5}).Read(data)
	stall := chunked(brotli24(data)[:260<<10])
	const conns = 32
	release := make(chan struct{})
	answers := make(chan int, conns) // the status, or 0 for none in time
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			status := 0
			defer func() { answers <- status; <-release }() // hold the connection until the count is taken
			c, err := net.Dial("tcp", s.Listener.Addr().String())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\nTransfer-Encoding: chunked\r\n\r\n")
			c.Write(stall)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				status = resp.StatusCode
			}
		})
	}
	// Each admitted stream holds 27.5 MiB of decoder state and its 4 MiB
	// bound: at most 8 fit.
	busy := 0
	for range conns {
		if <-answers == http.StatusServiceUnavailable {
			if busy++; busy == conns-9 {
				break
			}
		}
	}
	peak := f.Peak()
	close(release)
	wg.Wait()
	t.Logf("default Middleware: %d of %d stalled brotli streams answered 503, in-flight peak %d MiB", busy, conns, peak>>20)
	if busy < conns-9 {
		t.Errorf("%d of %d stalled brotli streams were answered 503, want at least %d: the default server holds a 16 MiB window for each", busy, conns, conns-9)
	}
	if peak > boundhttp.DefaultInFlightBytes {
		t.Errorf("in-flight peak %d, want at most %d", peak, boundhttp.DefaultInFlightBytes)
	}
}
