package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

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
			{"Middleware-streaming", mustMiddleware(b, boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit}})(drain)},
		} {
			b.Run(tt.name+"/"+sizeName(size), func(b *testing.B) {
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

func mustMiddleware(b *testing.B, c boundhttp.MiddlewareConfig) func(http.Handler) http.Handler {
	m, err := boundhttp.NewMiddleware(c)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return "1MiB"
	}
	return "4KiB"
}
