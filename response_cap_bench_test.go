package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// BenchmarkResponseCap compares a handler's response with and without
// MaxResponseBytes, written in one Write and in 64-byte writes, on a
// loopback server; compare ns/op and allocs/op of the pairs.
func BenchmarkResponseCap(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		data := text(size)
		for _, piece := range []int{size, 64} {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for p := data; len(p) > 0; p = p[min(piece, len(p)):] {
					w.Write(p[:min(piece, len(p))])
				}
			})
			for _, limit := range []int64{0, 4 << 20} {
				name := map[int64]string{0: "uncapped", 4 << 20: "capped"}[limit]
				if piece == 64 {
					name += "-64B-writes"
				}
				mw := mustMW(b, boundhttp.MiddlewareConfig{MaxResponseBytes: limit})
				b.Run(name+"/"+bsize(size), func(b *testing.B) {
					s := httptest.NewServer(mw(h))
					defer s.Close()
					c := s.Client()
					b.SetBytes(int64(size))
					b.ReportAllocs()
					for b.Loop() {
						resp, err := c.Get(s.URL)
						if err != nil {
							b.Fatal(err)
						}
						n, _ := io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if n != int64(size) {
							b.Fatalf("%d bytes, want %d", n, size)
						}
					}
				})
			}
		}
	}
}
