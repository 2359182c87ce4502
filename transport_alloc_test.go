//go:build !race

package boundhttp_test

import (
	"net/http"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestReadDoesNotAllocate: every Read is a hot path. The guard against
// Close during Read and the live usage record cost atomics, not
// allocations, in streaming and in whole-body mode.
func TestReadDoesNotAllocate(t *testing.T) {
	b := limits.Budget{MaxDecodedBytes: 16 << 20, MaxWireBytes: 16 << 20}
	for _, c := range []string{"identity", "gzip"} {
		s := server(t, body{coding: c, data: encode(c, text(8<<20))})
		for _, streaming := range []bool{true, false} {
			resp, err := (&http.Client{Transport: &boundhttp.Transport{Streaming: streaming, Budget: b}}).Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 1024)
			resp.Body.Read(buf) // the decoder's first Read sets it up
			if a := testing.AllocsPerRun(2000, func() { resp.Body.Read(buf) }); a != 0 {
				t.Errorf("%s, streaming %v: %v allocations per Read, want 0", c, streaming, a)
			}
			resp.Body.Close()
		}
	}
}
