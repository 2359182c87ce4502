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

// TestCloseDuringReadHTTP2 walks the trap "a body's state handed back to a
// pool while a Read still runs" over HTTP/2, where Close resets one stream
// of a shared connection: Close from another goroutine at random points of
// a Read, streaming and whole-body, every coding, many streams at once on
// one connection. A Read ends with its own bytes or an error, never another
// stream's bytes; the next responses, which reuse the pooled state and the
// connection, are byte-exact.
func TestCloseDuringReadHTTP2(t *testing.T) {
	t.Parallel()
	var l letters
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		letter := l.next()
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		c := r.URL.Query().Get("c")
		w.Header().Set("X-Letter", string(letter))
		serve(w, body{coding: c, data: l.encoded(c, letter, n), chunked: true})
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	defer s.Close()
	tr := &boundhttp.Transport{Base: s.Client().Transport, Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	rounds := 16
	if testing.Short() {
		rounds = 6
	}
	const size = 100000
	var wg sync.WaitGroup
	for _, c := range codings {
		for _, streaming := range []bool{false, true} {
			wg.Go(func() {
				for i := range rounds {
					req, _ := http.NewRequest("GET", fmt.Sprintf("%s/?c=%s&n=%d", s.URL, c, size), nil)
					if streaming {
						req = req.WithContext(boundhttp.WithStreaming(req.Context()))
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Errorf("%s streaming %v: %v", c, streaming, err)
						return
					}
					if resp.ProtoMajor != 2 {
						t.Errorf("proto %s; want HTTP/2", resp.Proto)
					}
					letter, read, foreign, rerr := readWhileClosing(resp, i, false, 400*time.Microsecond)
					if foreign > 0 || read > size || (rerr == io.EOF && read != size) {
						t.Errorf("%s streaming %v round %d: read %d bytes, %d not %q, then %v", c, streaming, i, read, foreign, letter, rerr)
					}
				}
			})
		}
	}
	wg.Wait()
}
