package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
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
	var seq atomic.Int32
	var cache sync.Map
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		letter := byte('a' + seq.Add(1)%5)
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		c := r.URL.Query().Get("c")
		key := fmt.Sprint(c, letter, n)
		v, ok := cache.Load(key)
		if !ok {
			v, _ = cache.LoadOrStore(key, fastEncode(c, bytes.Repeat([]byte{letter}, n)))
		}
		w.Header().Set("X-Letter", string(letter))
		serve(w, body{coding: c, data: v.([]byte), chunked: true})
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
					letter := resp.Header.Get("X-Letter")[0]
					done := make(chan struct{})
					var read, foreign int
					var rerr error
					go func() {
						defer close(done)
						read, foreign, rerr = readUntilError(resp.Body, letter)
					}()
					time.Sleep(time.Duration(rand.IntN(400)) * time.Microsecond)
					if i%2 == 0 {
						resp.Body.Close()
					}
					<-done
					resp.Body.Close()
					if foreign > 0 || read > size || (rerr == io.EOF && read != size) {
						t.Errorf("%s streaming %v round %d: read %d bytes, %d not %q, then %v", c, streaming, i, read, foreign, letter, rerr)
					}
				}
			})
		}
	}
	wg.Wait()
}
