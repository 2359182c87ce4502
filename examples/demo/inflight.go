package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

const (
	stalls      = 32       // connections that stall
	inflightCap = 64 << 20 // the bounded server's in-flight budget
	stallFor    = time.Second
)

// brotliStall is the first 12 bytes of a brotli stream that declares a
// 16 MiB window and a 16 MiB first meta-block: the brotli decoder allocates
// its whole ring buffer on the fourth byte.
var brotliStall = append([]byte{0xCF, 0xFF, 0xFF, 0xFF}, "xxxxxxxx"...)

// inflight shows what per-body limits cannot bound: 32 connections that
// each send 12 bytes of brotli and stall cost a naive server hundreds of
// MiB, whatever its body limit; a Middleware with an InFlight budget stays
// within it and answers the rest 503. It returns the heap growth of both.
func inflight(w io.Writer) (naive, bounded int64, err error) {
	fmt.Fprintf(w, "\nbrotli stall: %d connections each send %d bytes of a brotli stream declaring a 16 MiB window, then stall for %v\n",
		stalls, len(brotliStall), stallFor)
	naiveH := http.MaxBytesHandler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, brotli.NewReader(r.Body))
	}), budget.MaxWireBytes)
	naive, _, err = stallAgainst(naiveH)
	if err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(w, "  naive server, http.MaxBytesHandler(%d) + brotli.NewReader: heap grew by %d MiB\n", budget.MaxWireBytes, naive>>20)

	f := limits.NewInFlight(inflightCap)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: budget, InFlight: f})
	if err != nil {
		return 0, 0, err
	}
	bounded, busy, err := stallAgainst(mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	if err != nil {
		return 0, 0, err
	}
	fmt.Fprintf(w, "  boundhttp.Middleware, InFlight %d MiB: heap grew by %d MiB, Peak() %d MiB, %d of %d answered 503 with Retry-After at once\n",
		inflightCap>>20, bounded>>20, f.Peak()>>20, busy, stalls)
	return naive, bounded, nil
}

// stallAgainst serves h, makes the stalled connections, and returns the
// peak heap growth (sampled every millisecond) and how many were answered
// 503 while they stalled.
func stallAgainst(h http.Handler) (growth int64, busy int, err error) {
	s := httptest.NewServer(h)
	defer s.Close()
	runtime.GC()
	base := heapObjects()
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			if g := int64(heapObjects()) - int64(base); g > peak.Load() {
				peak.Store(g)
			}
			select {
			case <-stop:
				return
			case <-tk.C:
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range stalls {
		wg.Go(func() {
			c, derr := net.Dial("tcp", s.Listener.Addr().String())
			if derr != nil {
				mu.Lock()
				err = derr
				mu.Unlock()
				return
			}
			defer c.Close()
			start := time.Now()
			// A Content-Length within the 64 KiB wire budget.
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: demo\r\nContent-Encoding: br\r\nContent-Length: 60000\r\n\r\n")
			c.Write(brotliStall)
			c.SetReadDeadline(start.Add(stallFor))
			resp, rerr := http.ReadResponse(bufio.NewReader(c), nil)
			if rerr == nil && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" {
				mu.Lock()
				busy++
				mu.Unlock()
			}
			time.Sleep(time.Until(start.Add(stallFor))) // hold the connection either way
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	return peak.Load(), busy, err
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
