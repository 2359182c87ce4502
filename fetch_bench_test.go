package boundhttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// The benchmarks of this file are the client rows of BENCHMARKS.md (see
// bench/run): each compares the Transport with a stock http.Transport
// (transparent gzip) fetching the same gzip JSON body from a loopback
// server in the same run. MB/s are of decoded bytes.

// fetchBudget holds the largest benchmark body.
var fetchBudget = limits.Budget{MaxWireBytes: 16 << 20, MaxDecodedBytes: 16 << 20}

// A fetcher is one way to fetch and read a whole body.
type fetcher struct {
	name string
	c    *http.Client
	read func(io.Reader) ([]byte, error)
}

// fetchers returns the stock client and the Transport read two ways: with
// io.ReadAll, as callers of net/http do, and with boundhttp.ReadBody, which
// takes the verified bytes without a second copy. idle is the number of
// idle connections per host each keeps (the concurrency benchmarks keep
// one per client).
func fetchers(idle int) []fetcher {
	stock := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: idle}}
	bounded := &http.Client{Transport: &boundhttp.Transport{
		Base:   &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: idle},
		Budget: fetchBudget,
	}}
	return []fetcher{
		{"stock", stock, io.ReadAll},
		{"bounded", bounded, io.ReadAll},
		{"bounded-ReadBody", bounded, boundhttp.ReadBody},
	}
}

// fetch gets url with f and checks that it read want bytes.
func (f fetcher) fetch(url string, want int) error {
	resp, err := f.c.Get(url)
	if err != nil {
		return err
	}
	data, err := f.read(resp.Body)
	resp.Body.Close()
	if err != nil || len(data) != want {
		return fmt.Errorf("%s: read %d bytes, %v; want %d", f.name, len(data), err, want)
	}
	return nil
}

func (f fetcher) close() { f.c.CloseIdleConnections() }

// gzipJSONServer answers every GET on a loopback connection with data,
// gzip-encoded, with a Content-Length, keeping the connection alive. It
// writes one prepared response and allocates nothing per request, so that
// the allocations a benchmark reports are the client's: a net/http server
// in the same process would add its own to both sides of every ratio.
func gzipJSONServer(data []byte) *cannedServer {
	gz := encode("gzip", data)
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(gz))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := &cannedServer{l: l, URL: "http://" + l.Addr().String() + "/", resp: append([]byte(head), gz...)}
	s.wg.Go(s.accept)
	return s
}

type cannedServer struct {
	URL  string
	l    net.Listener
	resp []byte
	wg   sync.WaitGroup
	mu   sync.Mutex
	cs   []net.Conn
}

func (s *cannedServer) accept() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.cs = append(s.cs, c)
		s.mu.Unlock()
		s.wg.Go(func() { s.serve(c) })
	}
}

// serve answers each request on c, which must have no body, with s.resp.
func (s *cannedServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		if len(line) > 2 || line[0] != '\r' { // not the end of the header
			continue
		}
		if _, err := c.Write(s.resp); err != nil {
			return
		}
	}
}

// Close stops the server and closes its connections.
func (s *cannedServer) Close() {
	s.l.Close()
	s.mu.Lock()
	for _, c := range s.cs {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// BenchmarkFetch is a whole-body fetch of a gzip JSON body, read to the end,
// on a kept-alive connection: 4 KiB (where pooled decoders count) and
// 8 MiB (where the copies of the body count).
func BenchmarkFetch(b *testing.B) {
	for _, size := range []int{4 << 10, 8 << 20} {
		b.Run("size="+bsize(size), func(b *testing.B) {
			s := gzipJSONServer(text(size))
			defer s.Close()
			for _, f := range fetchers(2) {
				b.Run("client="+f.name, func(b *testing.B) {
					defer f.close()
					b.SetBytes(int64(size))
					b.ReportAllocs()
					stop := cpuPerOp(b)
					for b.Loop() {
						if err := f.fetch(s.URL, size); err != nil {
							b.Fatal(err)
						}
					}
					stop()
				})
			}
		})
	}
}

// BenchmarkFetchClients runs the 4 KiB fetch of [BenchmarkFetch] from 1,
// 8 and 64 concurrent clients; compare each client count's ratio with the
// single client's.
func BenchmarkFetchClients(b *testing.B) {
	const size = 4 << 10
	data := text(size)
	s := gzipJSONServer(data)
	defer s.Close()
	for _, n := range []int{1, 8, 64} {
		for _, f := range fetchers(n) {
			b.Run(fmt.Sprintf("size=%s/clients=%d/client=%s", bsize(size), n, f.name), func(b *testing.B) {
				defer f.close()
				b.SetBytes(size)
				b.ReportAllocs()
				concurrently(b, n, func() error { return f.fetch(s.URL, size) })
			})
		}
	}
}

// BenchmarkFetchPaired is the paired form of BenchmarkFetch: one loop
// fetches the body with the stock client and with the Transport (read with
// io.ReadAll, or with ReadBody) in turn, the order flipping every
// iteration, so that the load of a shared machine falls on both instead of
// on whichever sub-benchmark ran at the time. Metrics: ns/op-stock and
// ns/op-bounded, the mean wall time of one fetch with each, and speed, the
// median over iterations of the stock fetch's time over the Transport's
// (above 1: the Transport is faster). ns/op, B/op and allocs/op count both
// fetches of an iteration.
func BenchmarkFetchPaired(b *testing.B) {
	for _, size := range []int{4 << 10, 8 << 20} {
		s := gzipJSONServer(text(size))
		fs := fetchers(2)
		timed := func(f fetcher) func() time.Duration {
			return func() time.Duration {
				start := time.Now()
				if err := f.fetch(s.URL, size); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
		}
		for _, f := range fs[1:] {
			b.Run("size="+bsize(size)+"/client="+f.name, func(b *testing.B) {
				timed(fs[0])() // open both connections before measuring
				timed(f)()
				p := interleave(b, timed(fs[0]), timed(f))
				b.ReportMetric(float64(p.tx.Nanoseconds())/float64(p.n), "ns/op-stock")
				b.ReportMetric(float64(p.ty.Nanoseconds())/float64(p.n), "ns/op-bounded")
				b.ReportMetric(p.medianRatio(), "speed")
			})
		}
		for _, f := range fs {
			f.close()
		}
		s.Close()
	}
}
