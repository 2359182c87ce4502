package boundhttp

import (
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestClosedBodyArmsNoAbortTimer pins the trap of a watch that outlives
// its body: every fetch ends by cancelling the request's context and then
// closing the body (RoundTrip after a whole body, Body.Close after a
// streaming one), and the context's watch, started by the cancel, armed
// its abortGrace timer after Close had looked for it: each healthy fetch
// left a timer that fired 500 ms later and closed a closed body (500 of
// 500 fetches in a probe), keeping the body and its context alive till
// then. Time is synthetic here (testing/synctest), so the check is exact.
func TestClosedBodyArmsNoAbortTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		w := new(connWatch)
		h := new(Transport).startTripTimer(new(tripTimer), cancel, w)
		h.stop(nil, nil)
		b := guardBody(new(connBody), ctx, ctx, io.NopCloser(strings.NewReader("hello")), w, h)
		cancel()
		b.Close()
		synctest.Wait() // the context's watch has run
		time.Sleep(4 * abortGrace)
		if b.aborted.Load() {
			t.Errorf("a body closed by its owner was aborted %v later by its context's watch", 4*abortGrace)
		}
	})
}

// blockingCloser is a body whose Close blocks until release is closed.
type blockingCloser struct {
	io.Reader
	release chan struct{}
}

func (c *blockingCloser) Close() error { <-c.release; return nil }

// TestSecondCloseWaitsForFirst pins the trap of a second Close that
// returns while the first is still closing the connection's body: a caller
// that closed the body (or the Transport's abort that did) could reuse
// what the body guards, or report it closed, while net/http still closes
// it. Time is synthetic here (testing/synctest), so the check is exact.
func TestSecondCloseWaitsForFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w := new(connWatch)
		h := new(Transport).startTripTimer(new(tripTimer), cancel, w)
		h.stop(nil, nil)
		src := &blockingCloser{Reader: strings.NewReader("hello"), release: make(chan struct{})}
		b := guardBody(new(connBody), ctx, ctx, src, w, h)
		go b.Close()
		synctest.Wait() // the first Close is blocked in the source's Close
		second := make(chan struct{})
		go func() {
			b.Close()
			close(second)
		}()
		synctest.Wait()
		select {
		case <-second:
			t.Fatal("a second Close returned while the first was still closing the body")
		default:
		}
		close(src.release)
		synctest.Wait()
		select {
		case <-second:
		default:
			t.Fatal("the second Close did not return once the first had")
		}
	})
}

// closeRecorder is a connection that records being closed.
type closeRecorder struct {
	net.Conn
	closed atomic.Bool
}

func (c *closeRecorder) Close() error { c.closed.Store(true); return nil }

// TestCloseWaitOnAMovingConnectionIsBounded pins the lever of the wedge
// guard's patience: a Close that waits on a connection whose writes keep
// moving (a peer that reads just fast enough to look alive) is let wait,
// and the connection left open, for at most closeWaitMax; then the
// connection is closed all the same. Without writes moving it is closed at
// the first look, abortGrace after the Close began. Time is synthetic
// (testing/synctest). Sabotage: without the cap the moving connection is
// never closed.
func TestCloseWaitOnAMovingConnectionIsBounded(t *testing.T) {
	for _, moving := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			conn := &closeRecorder{}
			w := &connWatch{conn: conn}
			fc := &framingConn{Conn: endlessConn{}}
			w.framing.Store(fc)
			h := new(Transport).startTripTimer(new(tripTimer), cancel, w)
			h.stop(nil, nil)
			src := &blockingCloser{Reader: strings.NewReader("x"), release: make(chan struct{})}
			b := guardBody(new(connBody), ctx, ctx, src, w, h)
			stop := make(chan struct{})
			if moving {
				go func() { // writes that keep moving, a little every 100 ms
					for {
						select {
						case <-stop:
							return
						case <-time.After(100 * time.Millisecond):
							fc.wrote.Add(1)
						}
					}
				}()
			}
			go b.Close()
			synctest.Wait()
			time.Sleep(abortGrace + time.Millisecond)
			synctest.Wait()
			if got := conn.closed.Load(); got == moving {
				t.Errorf("moving %v: closed %v after the first look, want %v", moving, got, !moving)
			}
			time.Sleep(closeWaitMax)
			synctest.Wait()
			if !conn.closed.Load() {
				t.Errorf("moving %v: the connection is open %v after the Close began", moving, closeWaitMax+abortGrace)
			}
			close(stop)
			close(src.release)
			synctest.Wait()
		})
	}
}
