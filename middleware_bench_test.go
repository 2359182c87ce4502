package boundhttp_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// BenchmarkMiddleware compares the Middleware with http.MaxBytesHandler for
// identity JSON bodies on a loopback server; compare ns/op of the pairs.
func BenchmarkMiddleware(b *testing.B) {
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})
	const limit = 4 << 20
	for _, size := range []int{4 << 10, 1 << 20} {
		data := text(size)
		for _, tt := range []struct {
			name string
			h    http.Handler
		}{
			{"MaxBytesHandler", http.MaxBytesHandler(drain, limit)},
			{"Middleware", boundhttp.Middleware(limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit})(drain)},
			{"Middleware-streaming", mustMW(b, boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit}})(drain)},
		} {
			b.Run(tt.name+"/"+bsize(size), func(b *testing.B) {
				s := httptest.NewServer(tt.h)
				defer s.Close()
				c := s.Client()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					resp, err := c.Post(s.URL, "application/json", bytes.NewReader(data))
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Fatalf("status %d", resp.StatusCode)
					}
				}
			})
		}
	}
}

// BenchmarkMiddlewareInFlight measures what charging an InFlight budget
// adds to the Middleware on 4 KiB JSON bodies over loopback. Requests to
// a server without and one with InFlight alternate in the same loop, so
// that the noise of a shared machine falls on both; the metric "ratio" is
// the time with InFlight over the time without (target <= 1.03).
func BenchmarkMiddlewareInFlight(b *testing.B) {
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})
	data := text(4 << 10)
	budget := limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}
	without := httptest.NewServer(mustMW(b, boundhttp.MiddlewareConfig{Budget: budget})(drain))
	defer without.Close()
	f := limits.NewInFlight(256 << 20)
	with := httptest.NewServer(mustMW(b, boundhttp.MiddlewareConfig{Budget: budget, InFlight: f})(drain))
	defer with.Close()
	post := func(s *httptest.Server) time.Duration {
		start := time.Now()
		resp, err := s.Client().Post(s.URL, "application/json", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	post(without)
	post(with)
	b.SetBytes(2 * int64(len(data)))
	alternate(b, f, func() time.Duration { return post(without) }, func() time.Duration { return post(with) })
}

// BenchmarkMiddlewareInFlightDirect is the same comparison without the
// loopback connection (handlers called with an httptest.ResponseRecorder),
// so that the cost of the budget is not lost in the noise of the network
// stack; allocations are reported per pair of requests.
func BenchmarkMiddlewareInFlightDirect(b *testing.B) {
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})
	data := text(4 << 10)
	budget := limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}
	without := mustMW(b, boundhttp.MiddlewareConfig{Budget: budget})(drain)
	f := limits.NewInFlight(256 << 20)
	with := mustMW(b, boundhttp.MiddlewareConfig{Budget: budget, InFlight: f})(drain)
	serve := func(h http.Handler) time.Duration {
		start := time.Now()
		req := httptest.NewRequest("POST", "/", bytes.NewReader(data))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("status %d", rec.Code)
		}
		return time.Since(start)
	}
	alternate(b, f, func() time.Duration { return serve(without) }, func() time.Duration { return serve(with) })
}

// alternate runs without and with in turn, each first every other time, so
// that the noise of a shared machine falls on both; it reports the time of
// each per request and their ratio, and fails if f still holds bytes.
func alternate(b *testing.B, f *limits.InFlight, without, with func() time.Duration) {
	p := interleave(b, without, with)
	b.ReportMetric(float64(p.tx.Nanoseconds())/float64(p.n), "ns/req-without")
	b.ReportMetric(float64(p.ty.Nanoseconds())/float64(p.n), "ns/req-with")
	b.ReportMetric(float64(p.ty)/float64(p.tx), "ratio")
	if f.InUse() != 0 {
		b.Fatalf("InUse() = %d after the benchmark, want 0", f.InUse())
	}
}

// pairs is what interleave measured: the total time of each side, the
// number of iterations, and a histogram of the per-iteration ratios x/y.
type pairs struct {
	tx, ty time.Duration
	n      int
	// ratios counts ln(x/y) of each iteration in bins of 0.001 from -3
	// to 3 (a ratio of 0.05 to 20; beyond, the end bins): fixed memory
	// however long the benchmark runs, 0.1% resolution.
	ratios [6001]int64
}

// interleave runs x and y once per iteration of b.Loop, x first in odd
// iterations and y first in even ones.
func interleave(b *testing.B, x, y func() time.Duration) *pairs {
	p := new(pairs)
	b.ReportAllocs()
	for b.Loop() {
		var dx, dy time.Duration
		if p.n++; p.n%2 == 0 {
			dx = x()
			dy = y()
		} else {
			dy = y()
			dx = x()
		}
		p.tx += dx
		p.ty += dy
		bin := len(p.ratios) / 2
		if dx > 0 && dy > 0 {
			bin += int(math.Round(1000 * math.Log(float64(dx)/float64(dy))))
		}
		p.ratios[min(max(bin, 0), len(p.ratios)-1)]++
	}
	return p
}

// medianRatio is the median of the per-iteration ratios x/y, to 0.1%. A
// stall of the machine lands on one request of one iteration and moves
// the median by at most one iteration, where it can move the ratio of
// the totals by any amount.
func (p *pairs) medianRatio() float64 {
	var seen int64
	for i, c := range p.ratios {
		if seen += c; 2*seen >= int64(p.n) {
			return math.Exp(float64(i-len(p.ratios)/2) / 1000)
		}
	}
	return math.NaN()
}

// BenchmarkMiddlewareVsMaxBytesHandler is the paired form of the 4 KiB
// single-client row of BenchmarkMiddlewareClients: one loop posts the
// 4 KiB identity JSON body to a http.MaxBytesHandler server and to a
// Middleware server in turn (the order flipping every iteration), each
// over its own kept-alive loopback connection, so that the load of a
// shared machine falls on both instead of on whichever ran at the time.
// Metrics: ns/req-MaxBytesHandler and ns/req-Middleware, the mean wall
// time of one request to each, and speed, the median over iterations of
// MaxBytesHandler's time over the Middleware's (above 1: the Middleware
// is faster). ns/op, B/op and allocs/op count both requests of an
// iteration; both servers share the process, so garbage collection
// caused by either side's allocations slows both.
func BenchmarkMiddlewareVsMaxBytesHandler(b *testing.B) {
	const size = 4 << 10
	const limit = 4 << 20
	data := text(size)
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})
	b.Run("size="+bsize(size), func(b *testing.B) {
		stock := newPoster(b, http.MaxBytesHandler(drain, limit), "", data, 1)
		ours := newPoster(b, boundhttp.Middleware(limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit})(drain), "", data, 1)
		timed := func(p poster) func() time.Duration {
			return func() time.Duration {
				start := time.Now()
				if err := p.post(); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
		}
		// Open both connections before measuring.
		timed(stock)()
		timed(ours)()
		p := interleave(b, timed(stock), timed(ours))
		b.ReportMetric(float64(p.tx.Nanoseconds())/float64(p.n), "ns/req-MaxBytesHandler")
		b.ReportMetric(float64(p.ty.Nanoseconds())/float64(p.n), "ns/req-Middleware")
		b.ReportMetric(p.medianRatio(), "speed")
	})
}

// The benchmarks of this file are the server rows of BENCHMARKS.md (see
// bench/run): each compares the Middleware with what a handler does
// without it, on a loopback server, in the same run.

// A reader reads a whole request body in a handler.
type reader func(io.Reader) ([]byte, error)

// readHandler reads the body with read and answers 200 if it has want
// bytes, 500 otherwise.
func readHandler(read reader, want int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := read(r.Body)
		if err != nil || len(data) != want {
			http.Error(w, fmt.Sprintf("read %d bytes, %v", len(data), err), http.StatusInternalServerError)
		}
	}
}

// byHand is what handlers write without the library: the wire limit of
// http.MaxBytesHandler, the standard gzip reader and io.ReadAll, with no
// bound on the decoded size.
func byHand(want int, limit int64) http.Handler {
	return http.MaxBytesHandler(readHandler(func(body io.Reader) ([]byte, error) {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, err
		}
		return io.ReadAll(zr)
	}, want), limit)
}

// poster posts data to url with the given Content-Encoding.
type poster struct {
	c      *http.Client
	url    string
	coding string
	data   []byte
}

func (p poster) post() error {
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(p.data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.coding != "" {
		req.Header.Set("Content-Encoding", p.coding)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// newPoster starts a loopback server of h and returns a poster of data to
// it keeping idle connections for clients concurrent clients.
func newPoster(b *testing.B, h http.Handler, coding string, data []byte, clients int) poster {
	s := httptest.NewServer(h)
	b.Cleanup(s.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return poster{c: &http.Client{Transport: tr}, url: s.URL, coding: coding, data: data}
}

// BenchmarkMiddlewareGzip posts a 64 KiB gzip JSON body to a handler that
// reads it whole: by hand (MaxBytesHandler, gzip.NewReader, io.ReadAll),
// behind the Middleware with io.ReadAll, and behind the Middleware with
// boundhttp.ReadBody.
func BenchmarkMiddlewareGzip(b *testing.B) {
	const size = 64 << 10
	const limit = 4 << 20
	data := text(size)
	gz := encode("gzip", data)
	mw := boundhttp.Middleware(limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit})
	for _, tt := range []struct {
		name string
		h    http.Handler
	}{
		{"by-hand", byHand(size, limit)},
		{"Middleware", mw(readHandler(io.ReadAll, size))},
		{"Middleware-ReadBody", mw(readHandler(boundhttp.ReadBody, size))},
	} {
		b.Run("size="+bsize(size)+"/handler="+tt.name, func(b *testing.B) {
			p := newPoster(b, tt.h, "gzip", gz, 1)
			b.SetBytes(size)
			b.ReportAllocs()
			stop := cpuPerOp(b)
			for b.Loop() {
				if err := p.post(); err != nil {
					b.Fatal(err)
				}
			}
			stop()
		})
	}
}

// BenchmarkMiddlewareClients posts the 4 KiB identity JSON body of
// BenchmarkMiddleware from 1, 8 and 64 concurrent clients; compare each
// client count's ratio with the single client's. The single client is the
// 4 KiB row of BENCHMARKS.md.
func BenchmarkMiddlewareClients(b *testing.B) {
	const size = 4 << 10
	const limit = 4 << 20
	data := text(size)
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})
	for _, n := range []int{1, 8, 64} {
		for _, tt := range []struct {
			name string
			h    http.Handler
		}{
			{"MaxBytesHandler", http.MaxBytesHandler(drain, limit)},
			{"Middleware", boundhttp.Middleware(limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit})(drain)},
		} {
			b.Run(fmt.Sprintf("size=%s/clients=%d/handler=%s", bsize(size), n, tt.name), func(b *testing.B) {
				p := newPoster(b, tt.h, "", data, n)
				b.SetBytes(size)
				b.ReportAllocs()
				concurrently(b, n, p.post)
			})
		}
	}
}
