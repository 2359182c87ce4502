package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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
	without := httptest.NewServer(mustMiddleware(b, boundhttp.MiddlewareConfig{Budget: budget})(drain))
	defer without.Close()
	f := limits.NewInFlight(256 << 20)
	with := httptest.NewServer(mustMiddleware(b, boundhttp.MiddlewareConfig{Budget: budget, InFlight: f})(drain))
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
	var tWithout, tWith time.Duration
	var i int
	b.SetBytes(2 * int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if i++; i%2 == 0 {
			tWithout += post(without)
			tWith += post(with)
		} else {
			tWith += post(with)
			tWithout += post(without)
		}
	}
	b.ReportMetric(float64(tWithout.Nanoseconds())/float64(i), "ns/req-without")
	b.ReportMetric(float64(tWith.Nanoseconds())/float64(i), "ns/req-with")
	b.ReportMetric(float64(tWith)/float64(tWithout), "ratio")
	if f.InUse() != 0 {
		b.Fatalf("InUse() = %d after the benchmark, want 0", f.InUse())
	}
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
	without := mustMiddleware(b, boundhttp.MiddlewareConfig{Budget: budget})(drain)
	f := limits.NewInFlight(256 << 20)
	with := mustMiddleware(b, boundhttp.MiddlewareConfig{Budget: budget, InFlight: f})(drain)
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
	var tWithout, tWith time.Duration
	var i int
	b.ReportAllocs()
	for b.Loop() {
		if i++; i%2 == 0 {
			tWithout += serve(without)
			tWith += serve(with)
		} else {
			tWith += serve(with)
			tWithout += serve(without)
		}
	}
	b.ReportMetric(float64(tWithout.Nanoseconds())/float64(i), "ns/req-without")
	b.ReportMetric(float64(tWith.Nanoseconds())/float64(i), "ns/req-with")
	b.ReportMetric(float64(tWith)/float64(tWithout), "ratio")
	if f.InUse() != 0 {
		b.Fatalf("InUse() = %d after the benchmark, want 0", f.InUse())
	}
}
