package boundhttp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// deadlineBound is how long after its deadline a fetch may still run: the
// Transport's promise is 2 × 500 ms plus scheduling; the rest is margin for
// a loaded machine. Without the Transport's connection-level abort these
// fetches never return.
const deadlineBound = 6 * time.Second

// stuckWriter is an HTTP/2 server that answers the first request with
// HEADERS and 16 KiB of DATA, then never reads its socket again and writes
// PING frames until its writes block: net/http's client answers each PING
// under the connection's write lock, so once the socket buffers fill it
// blocks there, holding the lock. wedged is closed then; the connection
// stays open until the test ends.
func stuckWriter(wedged chan struct{}, done <-chan struct{}) func(c *testenc.H2Conn) {
	var once sync.Once
	return func(c *testenc.H2Conn) {
		raw := c.Conn
		if tc, ok := raw.(*tls.Conn); ok {
			raw = tc.NetConn()
		}
		if tc, ok := raw.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10) // fill sooner
		}
		id, err := c.NextRequest()
		if err != nil {
			return
		}
		c.Headers(id, false, ":status", "200", "content-type", "text/plain", "content-length", "1048576")
		c.Data(id, make([]byte, 16<<10), 0, false)
		pings := make([]byte, 0, 1000*17)
		for i := range 1000 {
			pings = append(pings, 0, 0, 8, testenc.H2Ping, 0, 0, 0, 0, 0, byte(i), 0, 0, 0, 0, 0, 0, 0)
		}
		var written atomic.Int64
		go func() {
			for range 100000 { // at most 100M PINGs; the client wedges after a few thousand
				if _, err := c.Conn.Write(pings); err != nil {
					return
				}
				written.Add(1)
			}
		}()
		for last := int64(-1); ; { // wedged: no write completes for 200 ms
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if n := written.Load(); n == last {
				break
			} else {
				last = n
			}
		}
		once.Do(func() { close(wedged) })
		<-done // hold the connection open, unread
	}
}

// smallSendBuffer dials with a 4 KiB send buffer, so that a peer that
// stops reading blocks the client's writes within milliseconds.
func smallSendBuffer(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := new(net.Dialer).DialContext(ctx, network, addr)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// hostile1 is the HTTP/1.1 counterpart: headers and 16 KiB of a 1 MiB
// body, then nothing, the request never read further.
func hostile1(t *testing.T, done <-chan struct{}) string {
	return testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1048576\r\n\r\n")
		conn.Write(make([]byte, 16<<10))
		<-done
	})
}

// TestDeadlineEndsFetchFromStuckPeer pins the trap of a peer that stops
// reading: every deadline (Budget.Timeout, the request's context,
// http.Client.Timeout) ends RoundTrip, Read and Close within deadlineBound,
// on HTTP/1.1, h2c and HTTP/2 over TLS, in whole-body, streaming and Close
// paths, and the in-flight charge is given back.
func TestDeadlineEndsFetchFromStuckPeer(t *testing.T) {
	t.Parallel()
	const deadline = 2500 * time.Millisecond
	type result struct {
		name string
		took time.Duration
		err  error
		hung bool
		held int64
	}
	var wg sync.WaitGroup
	results := make(chan result, 27)
	for _, proto := range []string{"http1", "h2c", "h2"} {
		for _, path := range []string{"whole", "stream", "close"} {
			for _, clock := range []string{"budget", "context", "client"} {
				wg.Add(1)
				go func() { // all at once: each waits for its deadline
					defer wg.Done()
					took, err, held, hung := fetchFromStuckPeer(t, proto, path, clock, deadline)
					results <- result{proto + "/" + path + "/" + clock, took, err, hung, held}
				}()
			}
		}
	}
	wg.Wait()
	close(results)
	for r := range results {
		switch {
		case r.hung:
			t.Errorf("%s: still running %v after the start (deadline %v)", r.name, r.took, deadline)
		case r.err == nil:
			t.Errorf("%s: no error from a stuck peer", r.name)
		case r.held != 0:
			t.Errorf("%s: in-flight charge after the fetch ended: %d bytes, want 0", r.name, r.held)
		default:
			t.Logf("%s: ended %v after the deadline: %.120v", r.name, (r.took - deadline).Round(time.Millisecond), r.err)
		}
	}
}

// fetchFromStuckPeer fetches from a stuck peer of proto along path with
// the deadline set on clock, and reports how long it took, its error, the
// in-flight bytes still held, and whether it hung past deadlineBound.
func fetchFromStuckPeer(t *testing.T, proto, path, clock string, deadline time.Duration) (time.Duration, error, int64, bool) {
	done := make(chan struct{})
	defer close(done)
	wedged := make(chan struct{})
	var url string
	var base *http.Transport
	switch proto {
	case "http1":
		url, base = hostile1(t, done), boundhttp.NewBaseTransport()
		close(wedged)
	default:
		u, pool := testenc.H2Server(t, proto == "h2", stuckWriter(wedged, done))
		url, base = u, testenc.H2Client(boundhttp.NewBaseTransport(), pool)
		base.HTTP2.WriteByteTimeout = time.Hour // prove the Transport's own lever
		base.DialContext = smallSendBuffer
	}
	f := limits.NewInFlight(8 << 20)
	tr := &boundhttp.Transport{Base: base, InFlight: f, Streaming: path != "whole"}
	client := &http.Client{Transport: tr}
	ctx := context.Background()
	switch clock {
	case "budget":
		tr.Budget.Timeout = deadline
	case "context":
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	case "client":
		client.Timeout = deadline
	}
	start := time.Now()
	ended := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := client.Do(req)
		if err != nil {
			ended <- err
			return
		}
		if path == "close" { // Close, unread, once the peer is stuck and the deadline passed
			<-wedged
			<-time.After(deadline - time.Since(start))
			ended <- errors.Join(errors.New("closed"), resp.Body.Close())
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ended <- err
	}()
	select {
	case <-wedged:
	case <-time.After(deadline):
		t.Errorf("%s/%s/%s: the peer's writes never blocked before the deadline: the trap was not set", proto, path, clock)
	}
	select {
	case err := <-ended:
		return time.Since(start), err, f.InUse(), false
	case <-time.After(deadline + deadlineBound):
		return time.Since(start), nil, f.InUse(), true
	}
}
