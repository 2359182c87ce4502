package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestConcurrentReadJSONCheckedStream (trap: state without an owner while a
// Read runs): a streamed JSON body checked by Transport.JSON wraps the body
// in a checker that the body's read guard does not cover: the guard admits
// the next Read as soon as the body's own Read returns, while the first is
// still feeding the checker. Overlapping Reads, which must fail with
// "concurrent Read", raced on the checker (fed out of order: spurious
// syntax errors, or a data race under -race). Each Read either reads in
// turn or fails as a concurrent Read, and the valid document never fails
// its check.
func TestConcurrentReadJSONCheckedStream(t *testing.T) {
	t.Parallel()
	doc := `{"a":[` + strings.Repeat(`{"k":"v","n":[1,2,3]},`, 3000) + `0],"b":"` + strings.Repeat("x", 20000) + `"}`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Streaming: true, JSON: &limits.JSON{MaxDepth: 8}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for round := range 60 {
		resp, err := client.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				buf := make([]byte, 37)
				for range 1 << 16 { // bounded: the body is about 130 KB
					_, err := resp.Body.Read(buf)
					switch {
					case err == nil:
					case err == io.EOF:
						return
					case strings.Contains(err.Error(), "concurrent Read"):
					default:
						t.Errorf("round %d: a Read of a valid JSON document failed: %v", round, err)
						return
					}
				}
			})
		}
		wg.Wait()
		resp.Body.Close()
	}
}
