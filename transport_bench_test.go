package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// BenchmarkTransport compares the Transport with a stock http.Transport
// (transparent gzip) fetching the same in-budget gzip body from a loopback
// server. MB/s are of decoded bytes; compare the two sub-benchmarks.
func BenchmarkTransport(b *testing.B) {
	data := text(1 << 20)
	gz := encode("gzip", data)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serve(w, body{coding: "gzip", data: gz})
	}))
	defer s.Close()
	for _, tt := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"stock", &http.Transport{}},
		{"bounded", &boundhttp.Transport{Base: &http.Transport{DisableCompression: true}}},
		{"bounded-streaming", &boundhttp.Transport{Base: &http.Transport{DisableCompression: true}, Streaming: true}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			c := &http.Client{Transport: tt.rt}
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Get(s.URL)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{resp.Body}, buf)
				resp.Body.Close()
				if err != nil || n != int64(len(data)) {
					b.Fatalf("read %d bytes, %v", n, err)
				}
			}
		})
	}
}
