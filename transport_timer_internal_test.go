package boundhttp

import (
	"context"
	"net"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// recordedConn is a connection that records its Close.
type recordedConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *recordedConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// TestCloseGuardedWhateverTheBodysDeadlineDid pins the trap of one timer
// for a round trip's three deadlines: the guard of the body's Close must
// hold whether the body's Budget.Timeout was stopped before the Close (the
// guard then takes the round trip's timer over) or had fired (the timer is
// spent, and the guard needs one of its own). Either way a Close that
// blocks has its connection closed abortGrace after it began. Time is
// synthetic here (testing/synctest), so the check is exact.
func TestCloseGuardedWhateverTheBodysDeadlineDid(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		// closeAt is when the Close begins: the caller's Close before the
		// deadline, or, after it, the one abortGrace past the deadline.
		closeAt time.Duration
	}{
		{"stopped", time.Hour, time.Second},
		{"fired", time.Second, time.Second + abortGrace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w := new(connWatch)
				conn := &recordedConn{closed: make(chan struct{})}
				w.got(httptrace.GotConnInfo{Conn: conn})
				h := new(Transport).startTripTimer(new(tripTimer), cancel, w)
				h.stop(nil, nil)
				src := &blockingCloser{Reader: strings.NewReader("hello"), release: make(chan struct{})}
				defer close(src.release)
				g := guardBody(new(connBody), context.Background(), ctx, src, w, h)
				dc, err := decoder.NewConfig[decoder.Option](nil)
				if err != nil {
					t.Fatal(err)
				}
				rb := new(body.Body)
				if err := rb.Open(&body.Config{Side: body.Client, Decoder: dc}, &body.Source{Body: g, Closer: g,
					Budget: limits.Budget{Timeout: tc.timeout}.WithDefaults(), Mode: body.Stream, Ctx: ctx,
					Cancel: cancel, Timer: h.lend(rb, g)}); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				if tc.timeout > tc.closeAt {
					time.Sleep(tc.closeAt)
					go rb.Close()
				}
				synctest.Wait()
				select {
				case <-conn.closed:
					t.Fatalf("connection closed %v after Open, before any Close was guarded", time.Since(start))
				default:
				}
				time.Sleep(tc.closeAt + abortGrace - time.Since(start))
				synctest.Wait()
				select {
				case <-conn.closed:
				default:
					t.Fatalf("a Close blocked since %v: its connection still open %v later", tc.closeAt, abortGrace)
				}
			})
		})
	}
}
