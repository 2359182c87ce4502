package boundhttp_test

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestWedgedConnectionNotHandedOn pins the trap of a deadline that ends
// one fetch but leaves its wedged HTTP/2 connection in the pool: a server
// that stops reading while it floods PINGs leaves net/http's client blocked
// under the connection's write lock, and a whole body, read to its end of
// buffered bytes, closes without touching that lock, so nothing closed the
// connection and the next request on it waited its whole HeaderTimeout
// (then the next one, until a PING timeout). Once net/http leaves a Read
// waiting abortGrace past the deadline, the connection is stuck and must
// go: the next request gets a new one and is answered at once. The
// base's WriteByteTimeout is an hour here, to prove the Transport's own
// lever.
func TestWedgedConnectionNotHandedOn(t *testing.T) {
	t.Parallel()
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "h2"}[useTLS], func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			defer close(done)
			wedged := make(chan struct{})
			stuck := stuckWriter(wedged, done)
			var conns atomic.Int32
			url, pool := testenc.H2Server(t, useTLS, func(c *testenc.H2Conn) {
				if conns.Add(1) == 1 {
					stuck(c)
					return
				}
				for { // later connections answer
					id, err := c.NextRequest()
					if err != nil {
						return
					}
					c.Headers(id, false, ":status", "200", "content-length", "2")
					c.Data(id, []byte("ok"), 0, true)
				}
			})
			base := testenc.H2Client(boundhttp.NewBaseTransport(), pool)
			base.HTTP2.WriteByteTimeout = time.Hour
			base.DialContext = smallSendBuffer
			const deadline = 2500 * time.Millisecond
			tr := &boundhttp.Transport{Base: base, Budget: limits.Budget{Timeout: deadline}, HeaderTimeout: deadlineBound}
			first := make(chan error, 1)
			go func() {
				_, err := tr.RoundTrip(newGet(t, url))
				first <- err
			}()
			select {
			case <-wedged:
			case <-time.After(deadline):
				t.Fatalf("the peer's writes never blocked before the deadline: the trap was not set")
			}
			if err := <-first; err == nil {
				t.Fatalf("first fetch from the stuck peer: no error")
			}
			start := time.Now()
			resp, err := tr.RoundTrip(newGet(t, url))
			took := time.Since(start)
			if err != nil {
				t.Fatalf("next fetch: %v after %v, want an answer on a new connection", err, took)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "ok" || err != nil || took > deadlineBound {
				t.Errorf("next fetch: %q, %v after %v, want ok at once", body, err, took)
			}
			if n := conns.Load(); n != 2 {
				t.Errorf("connections: %d, want 2 (the wedged one closed, a new one)", n)
			}
		})
	}
}

func newGet(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
