package boundhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestCloseDuringReadLazyRedirectBody walks the trap "a body's state handed
// back to a pool while a Read still runs" for the one body kind the other
// Close-during-Read tests leave out: a redirect returned to a caller whose
// CheckRedirect answers http.ErrUseLastResponse, verified whole on its first
// Read (decoder, then pooled chunks). Close comes from another goroutine at
// random points of a Read or a WriteTo; the Read must end with an error or
// its own bytes, never another response's, and the next bodies, which reuse
// the pooled state, must be byte-exact.
func TestCloseDuringReadLazyRedirectBody(t *testing.T) {
	t.Parallel()
	var l letters
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		letter := l.next()
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		c := r.URL.Query().Get("c")
		w.Header().Set("X-Letter", string(letter))
		w.Header().Set("Location", "/elsewhere")
		serve(w, body{coding: c, data: l.encoded(c, letter, n), chunked: true, status: http.StatusFound})
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	rounds := 24
	if testing.Short() {
		rounds = 8
	}
	const size = 100000
	var wg sync.WaitGroup
	for _, c := range codings {
		wg.Go(func() {
			for i := range rounds {
				resp, err := client.Get(fmt.Sprintf("%s/?c=%s&n=%d", s.URL, c, size))
				if err != nil {
					t.Errorf("%s: %v", c, err)
					return
				}
				if resp.StatusCode != http.StatusFound {
					t.Errorf("%s: status %d", c, resp.StatusCode)
				}
				letter, read, foreign, rerr := readWhileClosing(resp, i, true, 600*time.Microsecond)
				if foreign > 0 || read > size || (rerr == io.EOF && read != size) {
					t.Errorf("%s round %d: read %d bytes, %d not %q, then %v", c, i, read, foreign, letter, rerr)
				}
			}
		})
	}
	wg.Wait()
}
