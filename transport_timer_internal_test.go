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

// TestTripTimerReusedOnlyWhenStopped (trap: a pooled timer whose function
// is still on its way): a round trip's timer goes back to the pool for
// another round trip only when the last Stop stopped it. One that fired,
// here the guard of a Close that hung, may still be calling into its round
// trip, and must never be handed to a later one. A timer of a
// testing/synctest bubble is never pooled: used outside its bubble, it
// aborts the process.
func TestTripTimerReusedOnlyWhenStopped(t *testing.T) {
	trip := func() (*tripTimer, *recordedConn) {
		w := new(connWatch)
		conn := &recordedConn{closed: make(chan struct{})}
		w.got(httptrace.GotConnInfo{Conn: conn})
		h := new(Transport).startTripTimer(new(tripTimer), func() {}, w)
		h.stop(nil, nil)
		return h, conn
	}
	t.Run("stopped", func(t *testing.T) {
		h, _ := trip()
		h.guardClose(time.Hour)
		h.closed()
		if h.slot != nil {
			t.Fatal("a timer stopped for good was not given back")
		}
	})
	t.Run("fired", func(t *testing.T) {
		h, conn := trip()
		slot := h.slot
		h.guardClose(time.Millisecond)
		<-conn.closed // the guard fired: the Close hung past its grace
		h.closed()
		if h.slot == nil || slot.h.Load() != h {
			t.Fatal("a timer that fired was given to another round trip")
		}
	})
	t.Run("bubble", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			h, _ := trip()
			h.guardClose(time.Hour)
			h.closed()
			if h.slot == nil {
				t.Fatal("a bubble's timer was given back to the pool")
			}
		})
	})
}
