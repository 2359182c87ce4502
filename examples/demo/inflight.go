package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
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
// within it and answers the rest 503, and so does one with the defaults,
// within DefaultServerInFlight. It returns the heap growth of the three.
func inflight(w io.Writer) (naive, bounded, defaulted int64, err error) {
	fmt.Fprintf(w, "\nbrotli stall: %d connections each send %d bytes of a brotli stream declaring a 16 MiB window, then stall for %v\n",
		stalls, len(brotliStall), stallFor)
	naiveH := http.MaxBytesHandler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, brotli.NewReader(r.Body))
	}), budget.MaxWireBytes)
	naive, naiveRSS, _, err := stallAgainst(naiveH)
	if err != nil {
		return 0, 0, 0, err
	}
	fmt.Fprintf(w, "  naive server, http.MaxBytesHandler(%d) + brotli.NewReader: heap grew by %d MiB (allocated), resident memory by %s\n",
		budget.MaxWireBytes, naive>>20, mib(naiveRSS))

	f := limits.NewInFlight(inflightCap)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: budget, InFlight: f})
	if err != nil {
		return 0, 0, 0, err
	}
	bounded, boundedRSS, busy, err := stallAgainst(mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	if err != nil {
		return 0, 0, 0, err
	}
	fmt.Fprintf(w, "  boundhttp.Middleware, InFlight %d MiB: heap grew by %d MiB (allocated), resident memory by %s, Peak() %d MiB, %d of %d answered 503 with Retry-After at once\n",
		inflightCap>>20, bounded>>20, mib(boundedRSS), f.Peak()>>20, busy, stalls)
	defaulted, defaultedRSS, busy, err := stallAgainst(boundhttp.Middleware(budget)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
	if err != nil {
		return 0, 0, 0, err
	}
	fmt.Fprintf(w, "  boundhttp.Middleware with no InFlight set (DefaultServerInFlight, %d MiB): heap grew by %d MiB (allocated), resident memory by %s, %d of %d answered 503\n",
		boundhttp.DefaultInFlightBytes>>20, defaulted>>20, mib(defaultedRSS), busy, stalls)
	fmt.Fprintf(w, "  (allocated counts the decoders' ring buffers whole; the pages a stalled stream never writes are not resident yet, and a stream that goes on fills them)\n")
	return naive, bounded, defaulted, nil
}

// stallAgainst serves h, makes the stalled connections, and returns the
// peak heap growth and the peak growth of resident memory (sampled every
// millisecond; -1 where the system does not say), and how many were
// answered 503 while they stalled.
func stallAgainst(h http.Handler) (growth, rssGrowth int64, busy int, err error) {
	s := httptest.NewUnstartedServer(h)
	s.Config.ReadHeaderTimeout = 10 * time.Second
	s.Start()
	defer s.Close()
	runtime.GC()
	base := heapObjects()
	baseRSS, rssOK := resident()
	var peak, peakRSS atomic.Int64
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
			if r, ok := resident(); ok && r-baseRSS > peakRSS.Load() {
				peakRSS.Store(r - baseRSS)
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
	rssGrowth = peakRSS.Load()
	if !rssOK {
		rssGrowth = -1
	}
	return peak.Load(), rssGrowth, busy, err
}

// resident reports the process's resident memory in bytes (Linux, from
// /proc/self/statm), or false where the system does not say.
func resident() (int64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}

// mib formats n bytes in MiB, or "n/a" for a negative n.
func mib(n int64) string {
	if n < 0 {
		return "n/a"
	}
	return strconv.FormatInt(n>>20, 10) + " MiB"
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
