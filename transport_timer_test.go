package boundhttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// fakeConn is the connection a scriptBase reports through GotConn; it
// counts the Transport's closes of it as wedged.
type fakeConn struct {
	net.Conn
	closes atomic.Int32
	once   sync.Once
	gone   chan struct{}
}

func newFakeConn() *fakeConn { return &fakeConn{gone: make(chan struct{})} }

func (c *fakeConn) Close() error {
	c.closes.Add(1)
	c.once.Do(func() { close(c.gone) })
	return nil
}

// script is what a scriptBase's peer does: its headers after headers, its
// body's bytes headers+body later, then the end (or nothing: stall).
type script struct {
	headers, body time.Duration
	stall         bool // no end after the bytes
	deaf          bool // the body ignores the request's context (a Base of the caller's)
	wedged        bool // Close blocks until the connection is closed
}

// scriptBase is a Base in a synctest bubble that plays a script.
type scriptBase struct {
	s    script
	conn *fakeConn
	data []byte
}

func (b *scriptBase) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if tr := httptrace.ContextClientTrace(ctx); tr != nil && tr.GotConn != nil {
		tr.GotConn(httptrace.GotConnInfo{Conn: b.conn})
	}
	select {
	case <-time.After(b.s.headers):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	body := &scriptBody{s: b.s, conn: b.conn, data: b.data, closed: make(chan struct{}),
		arrive: time.After(b.s.body)}
	if !b.s.deaf {
		body.done = ctx.Done()
	}
	h := http.Header{"Content-Length": {strconv.Itoa(len(b.data))}}
	return &http.Response{StatusCode: 200, ProtoMajor: 1, ProtoMinor: 1, Header: h,
		ContentLength: int64(len(b.data)), Body: body, Request: req}, nil
}

type scriptBody struct {
	s        script
	conn     *fakeConn
	data     []byte
	done     <-chan struct{} // the request's context, unless deaf
	arrive   <-chan time.Time
	sent     bool
	closed   chan struct{}
	closeOne sync.Once
}

var errBodyClosed = errors.New("script: body closed")

func (b *scriptBody) Read(p []byte) (int, error) {
	if !b.sent {
		select {
		case <-b.arrive:
		case <-b.done:
			return 0, context.Canceled
		case <-b.closed:
			return 0, errBodyClosed
		case <-b.conn.gone:
			return 0, net.ErrClosed
		}
		b.sent = true
		return copy(p, b.data), nil
	}
	if !b.s.stall {
		return 0, io.EOF
	}
	select {
	case <-b.done:
		return 0, context.Canceled
	case <-b.closed:
		return 0, errBodyClosed
	case <-b.conn.gone:
		return 0, net.ErrClosed
	}
}

func (b *scriptBody) Close() error {
	if b.s.wedged {
		<-b.conn.gone
	}
	b.closeOne.Do(func() { close(b.closed) })
	return nil
}

// timerCase is one fetch in a bubble: its outcome and what came after.
type timerCase struct {
	s          script
	stream     bool
	cancelable bool
	cancelAt   time.Duration // > 0: the caller cancels its context then
	closeAt    time.Duration // > 0: another goroutine closes the body then (streaming)
}

type timerOutcome struct {
	headersErr error         // RoundTrip's error
	bodyErr    error         // the read's error (nil: the verified end)
	ended      time.Duration // when RoundTrip (whole) or the read (stream) returned
	closes     int32         // the connection's closes as wedged, an hour after
	held       int64         // in-flight bytes an hour after
	gotBody    bool          // RoundTrip returned a response
}

const (
	tcHeaderTimeout = 2 * time.Second
	tcBodyTimeout   = 5 * time.Second
)

// run plays c in the current bubble: a fetch with HeaderTimeout
// tcHeaderTimeout and Budget.Timeout tcBodyTimeout, then an hour with the
// body closed, in which nothing of the fetch may fire.
func (c timerCase) run(t *testing.T) timerOutcome {
	f := limits.NewInFlight(1 << 20)
	conn := newFakeConn()
	tr := &Transport{Base: &scriptBase{s: c.s, conn: conn, data: []byte("hello, world")},
		HeaderTimeout: tcHeaderTimeout, Budget: limits.Budget{Timeout: tcBodyTimeout},
		Streaming: c.stream, InFlight: f}
	ctx := context.Background()
	if c.cancelable {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		if c.cancelAt > 0 {
			time.AfterFunc(c.cancelAt, cancel)
		}
	}
	start := time.Now()
	var o timerOutcome
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://script.test/", nil)
	resp, err := tr.RoundTrip(req)
	o.headersErr = err
	if err != nil && !errors.Is(err, ErrHeaderTimeout) {
		o.headersErr, o.bodyErr = nil, err // a whole body's verdict
	}
	if err == nil {
		o.gotBody = true
		if c.closeAt > 0 {
			time.AfterFunc(c.closeAt-time.Since(start), func() { resp.Body.Close() })
		}
		_, o.bodyErr = io.ReadAll(resp.Body)
		o.ended = time.Since(start)
		resp.Body.Close()
	} else {
		o.ended = time.Since(start)
	}
	time.Sleep(time.Hour)
	o.closes, o.held = conn.closes.Load(), f.InUse()
	return o
}

// TestTripTimerPhaseBoundaries pins the hand-over of the round trip's one
// timer from phase to phase (the headers, the body, the guard of its
// Close) at the instants where a phase ends exactly as its deadline
// passes, a nanosecond before and after: headers that arrive as
// HeaderTimeout passes, a body whose last byte arrives as Budget.Timeout
// passes, in whole-body and streaming mode, under a context that cannot
// end (Done nil: only the timer starts the guard's grace) and one that
// can, from a peer that honours the request's context and one that does
// not. Each fetch either succeeds or fails with the phase's timeout, ends
// within 2*abortGrace of its deadline, and leaves nothing that fires
// later: an hour on, the connection was never closed as wedged and the
// in-flight charge is back. Time is synthetic (testing/synctest): the
// instants are exact, and a goroutine left behind fails the bubble.
func TestTripTimerPhaseBoundaries(t *testing.T) {
	offsets := []time.Duration{-time.Nanosecond, 0, time.Nanosecond}
	for _, stream := range []bool{false, true} {
		for _, cancelable := range []bool{false, true} {
			for _, deaf := range []bool{false, true} {
				for _, dh := range offsets {
					for _, db := range offsets {
						c := timerCase{stream: stream, cancelable: cancelable,
							s: script{headers: tcHeaderTimeout + dh, body: tcBodyTimeout + db, deaf: deaf}}
						name := c.name() + "/headers" + dh.String() + "/body" + db.String()
						synctest.Test(t, func(t *testing.T) {
							o := c.run(t)
							c.check(t, name, o, dh, db)
						})
					}
				}
			}
		}
	}
}

func (c timerCase) name() string {
	n := "whole"
	if c.stream {
		n = "stream"
	}
	if c.cancelable {
		n += "/cancelable"
	} else {
		n += "/background"
	}
	if c.s.deaf {
		n += "/deaf"
	}
	return n
}

func (c timerCase) check(t *testing.T, name string, o timerOutcome, dh, db time.Duration) {
	t.Helper()
	switch {
	case dh < 0 && o.headersErr != nil:
		t.Errorf("%s: headers in time failed: %v", name, o.headersErr)
	case dh > 0 && !errors.Is(o.headersErr, ErrHeaderTimeout):
		t.Errorf("%s: late headers: err %v, want ErrHeaderTimeout", name, o.headersErr)
	}
	if o.headersErr != nil {
		if !errors.Is(o.headersErr, ErrHeaderTimeout) {
			t.Errorf("%s: RoundTrip failed with %v, want nil or ErrHeaderTimeout", name, o.headersErr)
		}
		if o.ended > tcHeaderTimeout+2*abortGrace {
			t.Errorf("%s: RoundTrip returned %v after it started, past HeaderTimeout + 2*abortGrace", name, o.ended)
		}
	} else {
		var le *limits.Error
		isTimeout := errors.As(o.bodyErr, &le) && le.Stage == limits.StageTimeout
		switch {
		case db < 0 && o.bodyErr != nil:
			t.Errorf("%s: a body in time failed: %v", name, o.bodyErr)
		case db > 0 && !isTimeout:
			t.Errorf("%s: a late body: err %v, want stage timeout", name, o.bodyErr)
		case o.bodyErr != nil && !isTimeout:
			t.Errorf("%s: the body failed with %v, want nil or stage timeout", name, o.bodyErr)
		}
		// The body's clock starts with the headers, which came at
		// tcHeaderTimeout+dh.
		if limit := tcHeaderTimeout + dh + tcBodyTimeout + 2*abortGrace; o.ended > limit {
			t.Errorf("%s: the body ended %v after the start, past Budget.Timeout + 2*abortGrace (%v)", name, o.ended, limit)
		}
	}
	if o.closes != 0 {
		t.Errorf("%s: the connection was closed as wedged %d times; its peer never wedged", name, o.closes)
	}
	if o.held != 0 {
		t.Errorf("%s: %d in-flight bytes held an hour after the fetch", name, o.held)
	}
}

// TestTripTimerCloseAndCancelAtPhaseEdges pins the phase hand-over against
// the caller: a streaming body whose peer stalls after its first bytes is
// left to Budget.Timeout under a context that cannot end, or closed from
// another goroutine, or its request's context cancelled, at each edge of
// the timer's phases (as the headers arrive, as
// Budget.Timeout passes, as the guard's abortGrace passes after it, a
// nanosecond either side), from a peer that honours the request's context,
// one that does not, and one whose Close blocks until the connection is
// closed. The read ends within 2*abortGrace of the first of the deadline,
// the Close and the cancel; only a Close that blocks, or a read a deaf
// peer keeps waiting, gets the connection closed as wedged (once); an hour
// on nothing else fired and the in-flight charge is back.
func TestTripTimerCloseAndCancelAtPhaseEdges(t *testing.T) {
	const headers = time.Second
	edges := []time.Duration{headers, headers + tcBodyTimeout, headers + tcBodyTimeout + abortGrace}
	var at []time.Duration
	for _, e := range edges {
		at = append(at, e-time.Nanosecond, e, e+time.Nanosecond)
	}
	for _, how := range []string{"close", "cancel", "deadline"} {
		for _, peer := range []string{"polite", "deaf", "wedged"} {
			for _, when := range at {
				switch {
				case how == "close" && when < headers:
					continue // no body to close yet
				case how == "deadline" && when != headers:
					continue // the deadline alone, under a context that cannot end
				case how == "deadline":
					when = time.Hour
				}
				c := timerCase{stream: true, cancelable: how != "deadline",
					s: script{headers: headers, body: time.Second, stall: true,
						deaf: peer != "polite", wedged: peer == "wedged"}}
				switch how {
				case "close":
					c.closeAt = when
				case "cancel":
					c.cancelAt = when
				}
				name := how + "/" + peer + "/at" + when.String()
				synctest.Test(t, func(t *testing.T) {
					o := c.run(t)
					first := min(when, headers+tcBodyTimeout)
					if o.ended > first+2*abortGrace {
						t.Errorf("%s: the read ended %v after the start, past %v + 2*abortGrace", name, o.ended, first)
					}
					if o.headersErr == nil && o.bodyErr == nil {
						t.Errorf("%s: a stalled body ended well", name)
					}
					switch {
					case o.closes > 1:
						t.Errorf("%s: the connection was closed as wedged %d times", name, o.closes)
					case peer == "polite" && o.closes != 0:
						t.Errorf("%s: the connection of a polite peer was closed as wedged", name)
					case peer == "wedged" && o.gotBody && o.closes != 1:
						t.Errorf("%s: a wedged Close returned without closing the connection", name)
					}
					if o.held != 0 {
						t.Errorf("%s: %d in-flight bytes held an hour after the fetch", name, o.held)
					}
				})
			}
		}
	}
}
