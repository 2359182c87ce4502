package boundhttp

import (
	"context"
	"io"
	"math"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// abortGrace is how long an abort waits for net/http before it acts
// itself: once a request's context is done, net/http has this long to end
// the body; then the Transport closes the body, and if closing it has not
// returned this long later, the connection the request got, unless its
// writes still move (see connWatch.moving). So every deadline ends a Read
// and a Close within 2*abortGrace of passing, plus scheduling, or, on a
// connection whose writes move, within abortGrace plus closeWaitMax.
//
// net/http's HTTP/2 client answers a server's PINGs while it holds the
// connection's write lock, and a cancelled stream writes RST_STREAM (a
// closed body with unread data, WINDOW_UPDATE) under the same lock: against
// a server that stopped reading, all of them block forever, and a Read of
// the body is never woken by the context. Closing the body wakes the Read;
// closing the connection frees the lock.
const abortGrace = 500 * time.Millisecond

// connWatch remembers the connection a request got, as
// [httptrace.ClientTrace.GotConn] reports it, so that an abort that
// net/http cannot complete can close it. On HTTP/2 the connection is
// shared by other streams; it is closed only when it is wedged: a Read
// still waits in net/http abortGrace after the deadline, or a Close of the
// body did not return within abortGrace, and the connection wrote nothing
// meanwhile (see moving); then those streams are stuck behind the same
// lock anyway. Closing it also keeps the pool from handing it to the next
// request. A connection whose writes still move is left open, and looked
// at again every abortGrace, for at most closeWaitMax: an upload beside the
// body (an MCP client's POST beside its event stream) is not failed by our
// close.
type connWatch struct {
	mu      sync.Mutex
	conn    net.Conn
	framing atomic.Pointer[framingConn] // the connection's count, if it keeps one
	wedged  *wedgedConns                // the Transport's, or nil: remembers what closeConn closed
	// handedWedged reports whether the request got a connection closed as
	// wedged before (see wedgedConns).
	handedWedged atomic.Bool
	trace        *httptrace.ClientTrace // the request's, see watchWrites
	writes       writeWatch
}

// got records the request's connection and grants the request its
// framing slack on a connection that counts.
func (w *connWatch) got(info httptrace.GotConnInfo) {
	w.mu.Lock()
	w.conn = info.Conn
	w.mu.Unlock()
	if w.wedged != nil && w.wedged.has(info.Conn) {
		w.handedWedged.Store(true)
	}
	if info.Reused && !info.WasIdle {
		w.watchWrites() // a connection other requests use now (HTTP/2)
	}
	if fc := framingOf(info.Conn); fc != nil {
		fc.grant()
		w.framing.Store(fc)
	}
}

// upgraded lifts the framing bound of a connection handed over by a 101
// Switching Protocols: what it carries now is no body of ours.
func (w *connWatch) upgraded() {
	if fc := w.framing.Load(); fc != nil {
		fc.slack.Store(math.MaxInt64)
	}
}

// delivered records n body bytes read from the request's connection.
func (w *connWatch) delivered(n int) {
	if fc := w.framing.Load(); fc != nil && n > 0 {
		fc.delivered(n)
	}
}

// written returns how far the writes of the request's connection have come
// (see framingConn.progress), or -1 when it does not count them (a
// connection of a Base not made by [NewBaseTransport]'s dialer).
func (w *connWatch) written() int64 {
	if fc := w.framing.Load(); fc != nil {
		return fc.progress()
	}
	return -1
}

// markNow returns the mark a look compares with later (see
// framingConn.mark), or -1 when the connection does not count its writes.
func (w *connWatch) markNow() int64 {
	if fc := w.framing.Load(); fc != nil {
		return fc.mark()
	}
	return -1
}

// moving reports whether the request's connection's writes moved since
// mark was taken (by written or markNow, or by the last call), and takes a
// new mark. A mark of -1 on a connection that counts (no Write was in
// progress when it was taken) takes the first mark now and counts as
// moving: the next look, abortGrace later, judges.
// A connection whose writes move is not wedged, however long the write lock
// a Read or Close waits for is held (an upload on a slow link writes one
// DATA frame under it at a time); one that did not move for abortGrace
// is. A connection that does not count its writes never moves: it is
// judged by the wait alone. net/http's own write timeout (the base's
// WriteByteTimeout) ends writes that stop.
func (w *connWatch) moving(mark *atomic.Int64) bool {
	n := w.written()
	return n >= 0 && mark.Swap(n) != n
}

// closeWaitMax bounds how long a Close is let wait on a connection whose
// writes still move (see connWatch.moving) before the connection is closed
// all the same: 30 s, about two DATA frames of 512 KiB at 280 kbit/s. A
// peer that reads just fast enough to look alive holds a Close no longer.
const closeWaitMax = 30 * time.Second

// closeConn closes the connection the request got, if any was reported,
// as wedged: it is remembered first, so that a request the pool hands it
// to before net/http has noticed the close is sent again (see
// wedgedConns). Nothing can be written on a wedged connection meanwhile.
func (w *connWatch) closeConn() {
	w.mu.Lock()
	c := w.conn
	w.mu.Unlock()
	if c == nil {
		return
	}
	if w.wedged != nil {
		w.wedged.add(c)
	}
	c.Close()
}

// watch returns ctx with a client trace (held in tr) that records the
// request's connection in w, which remembers in wedged (nil: nowhere) the
// connections it closes; hooks already in ctx still run.
func (w *connWatch) watch(ctx context.Context, tr *httptrace.ClientTrace, wedged *wedgedConns) context.Context {
	w.wedged, w.trace = wedged, tr
	tr.GotConn = w.got
	return httptrace.WithClientTrace(ctx, tr)
}

// connBody is the body a base transport returned, made to end when the
// request's context does, whatever the peer does: once ctx is done and
// abortGrace has passed, it closes itself (a blocked Read returns the
// context's error), and a Close that does not return within abortGrace
// closes the connection. Close is idempotent and safe from any goroutine;
// every Close returns once the body is closed.
//
// ctx is done when the caller's context is, or when the Transport
// cancels it: a deadline of its own (the body's Budget.Timeout, which
// calls deadlinePassed) or the end of the body (which closes it anyway).
// So the caller's context is watched, only if it can be done at all: the
// Transport's own cancel then spawns no goroutine.
type connBody struct {
	io.ReadCloser
	ctx     context.Context
	w       *connWatch
	mu      sync.Mutex
	stop    func() bool // stops watching the caller's context, or nil; guarded by mu
	passed  atomic.Bool // deadlinePassed ran
	timer   atomic.Pointer[time.Timer]
	aborted atomic.Bool  // closed by the watch, not by its owner
	reading atomic.Int32 // Reads in progress in net/http
	mark    atomic.Int64 // the connection's progress when the deadline passed (see connWatch.moving)
	closing atomic.Bool
	done    sync.WaitGroup // held from guardBody until the first Close returned
	err     error          // of the close; read after done
	// wedge closes the connection if the Close in progress does not
	// return within abortGrace.
	wedge *tripTimer
}

// guardBody makes b the guard of the body of resp's request, whose context
// is ctx, derived from the caller's context parent, and whose connection
// w watches; wedge guards b's Close (see [tripTimer.guardClose]).
func guardBody(b *connBody, parent, ctx context.Context, body io.ReadCloser, w *connWatch, wedge *tripTimer) *connBody {
	b.ReadCloser, b.ctx, b.w, b.wedge = body, ctx, w, wedge
	b.done.Add(1)
	if parent.Done() == nil {
		return b // only the Transport ends ctx, and it tells b
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stop = context.AfterFunc(parent, b.deadlinePassed)
	return b
}

// deadlinePassed starts abortGrace once a deadline ended the request's
// context: the caller's context, or the body's Budget.Timeout. Only the
// first call counts.
func (b *connBody) deadlinePassed() {
	if b.closing.Load() || b.passed.Swap(true) {
		return // closed already: nothing to abort
	}
	b.mark.Store(b.w.written())
	t := time.AfterFunc(abortGrace, b.abort)
	b.timer.Store(t)
	if b.closing.Load() {
		t.Stop() // Close came after the check and may have missed t
	}
}

// abort closes the body because its context is done and abortGrace has
// passed. A Read still waiting in net/http then means the connection is
// wedged (a healthy one ends a Read when the context does), unless its
// writes moved meanwhile: it is closed too, or the pool would hand it to
// the next request, which would wait there for its whole HeaderTimeout.
// The Close that follows is guarded the same way.
func (b *connBody) abort() {
	b.aborted.Store(true)
	if b.reading.Load() > 0 && !b.w.moving(&b.mark) {
		b.w.closeConn()
	}
	b.Close()
}

// Read reads the body; once the watch has closed it, its error is the
// context's, as net/http reports a cancelled body.
func (b *connBody) Read(p []byte) (int, error) {
	b.reading.Add(1)
	n, err := b.ReadCloser.Read(p)
	b.reading.Add(-1)
	b.w.delivered(n)
	if err != nil && err != io.EOF && b.aborted.Load() {
		err = context.Cause(b.ctx)
	}
	return n, err
}

// Close closes the body within abortGrace, closing the connection if it
// has to. A second Close waits for the first.
func (b *connBody) Close() error {
	if b.closing.Swap(true) {
		b.done.Wait()
		return b.err
	}
	b.mu.Lock()
	if b.stop != nil {
		b.stop()
	}
	b.mu.Unlock()
	if t := b.timer.Load(); t != nil {
		t.Stop()
	}
	b.wedge.guardClose(abortGrace)
	b.err = b.ReadCloser.Close()
	b.wedge.closed()
	b.done.Done()
	return b.err
}
