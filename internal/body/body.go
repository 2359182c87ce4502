// Package body is the engine every HTTP body of boundhttp runs on: one
// type, [Body], owns a body's whole life, on the client (the Transport's
// response bodies) and on the server (the Middleware's request bodies).
//
// A Body owns its source (the bytes off the connection), the decoder and
// its layers (pooled), the pooled chunks a whole body is held in, the read
// guard that gives that state an owner while Close may come from another
// goroutine (entered and left with defer, so a panic in a decoder cannot
// strand it), the body's in-flight charge, its usage record, its deadline
// (a timer on the client, read deadlines on the server) and the JSON shape
// check, one more layer over the decoded bytes. Streaming, whole and lazy
// (a redirect's body, verified whole on first read) are its modes; Close
// and Finish are its one end-of-life protocol. A whole request body with
// nothing to decode and a length its source keeps to takes no decoder at
// all (see exact.go): it is read straight into one chunk, under the same
// guard, charge, usage record and deadline.
//
// The Transport and the Middleware translate their configuration into a
// [Config] once, before any I/O, and describe each body by a [Source].
package body

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/internal/sat"
	"github.com/boundhttp/boundhttp/limits"
)

// Mode is how a body reaches its reader. Only the caller chooses it; the
// peer only supplies bytes.
type Mode uint8

const (
	// Stream hands decoded bytes on as they are read: a breach is a
	// sticky error, io.EOF comes only after the verified end.
	Stream Mode = iota
	// Whole is read and verified by [Body.ReadAll] before anyone reads it,
	// then served from pooled chunks.
	Whole
	// Lazy is Whole, read on the first Read or WriteTo instead of by the
	// owner: a redirect's body, which http.Client may close unread.
	Lazy
)

// Side is who reads the body: it decides the deadline mechanism and what
// errors mean.
type Side uint8

const (
	// Client bodies are responses: Budget.Timeout runs from Open (the
	// headers' arrival) on a timer that cancels the request; Close closes
	// the connection's body.
	Client Side = iota
	// Server bodies are requests: Budget.Timeout is a read deadline on the
	// connection, and a failed read is classified for the answer (see
	// [Body.Breach]).
	Server
)

// Config is what a Transport or a Middleware decided once, validated
// before any I/O; it is shared, read-only, by all their bodies.
type Config struct {
	Side    Side
	Decoder decoder.Config // the decoding options, in-flight budget included
	JSON    *limits.JSON   // the shape check of bodies whose Source asks for it; validated

	// Wrap, on the server, turns a breach into the error a streaming
	// handler reads (nil: the *limits.Error itself).
	Wrap func(*limits.Error) error

	// ClosedErr is what a Read returns after Close (nil: [ErrClosed]).
	ClosedErr error
}

// Source describes one body.
type Source struct {
	Body     io.Reader     // the bytes off the connection
	Closer   io.ReadCloser // closed by Close (the connection's body, of the type it has), or nil
	Encoding string        // the Content-Encoding value, several lines joined with ","
	Budget   limits.Budget // validated, defaults applied
	Mode     Mode
	SizeHint int64 // the decoded size to expect (an identity body's Content-Length), or <= 0
	// Exact, on the server, says that Body is framed by SizeHint: it returns
	// at most that many bytes and fails with io.ErrUnexpectedEOF when the
	// connection ends sooner (net/http's own body of a Content-Length
	// request). Such a body with no coding is read with no decoder.
	Exact bool
	JSON  bool // check the shape against Config.JSON

	// Ctx is the request's context: the in-flight wait ends with it, and
	// on the server it tells a client that is gone.
	Ctx context.Context
	// InFlightWait bounds each in-flight reservation's wait: < 0 until Ctx
	// is done, 0 no wait.
	InFlightWait time.Duration
	// Peers names the peers the in-flight charges count against (see
	// decoder.Reader.SetPeers): on the server the client's connection and
	// address, on the client the host.
	Peers [2]string

	// Cancel, on the client, ends a blocked read of the connection (it
	// cancels the request's context); the timer and Close call it.
	Cancel context.CancelFunc
	// Timer, on the client, is the clock of Budget.Timeout, lent by the
	// body's owner (nil: the body makes its own).
	Timer Timer
	// RC, on the server, sets the connection's read deadlines. ArmedAt is
	// when the body's deadline, ArmedAt + Budget.Timeout, started (zero:
	// no read deadline can end its reads): the Middleware set it on the
	// connection then, or, with Watched, set none, and the watchdog ends a
	// whole body's read still running at that deadline through RC (see
	// watchdog.go).
	RC      *http.ResponseController
	ArmedAt time.Time
	Watched bool
}

// A Timer is a client body's clock for Budget.Timeout, lent by its owner:
// the Transport runs one timer per round trip, for the response headers,
// then the body, then the guard of the body's Close, instead of one per
// phase. When it fires, the owner calls [Body.Expire].
type Timer interface {
	// Start arms it to fire after d. Open calls it once.
	Start(d time.Duration)
	// Stop disarms it unless it has fired. It may be called more than
	// once, from any goroutine.
	Stop()
}

// Body is one HTTP body through its whole life. The zero Body is ready for
// [Body.Open]; [Body.Usage] may be taken before Open, for a context value
// that outlives the Body's handing-out.
//
// Close (and Finish) may be called from another goroutine while a Read is
// in progress; Read, WriteTo and Take have one caller at a time (a second
// concurrent Read fails with [ErrConcurrentRead]).
type Body struct {
	g     guard
	cfg   *Config
	src   Source
	usage Usage

	d    *decoder.Reader      // nil once released, and for an exact body (see exact)
	json *decoder.JSONChecker // the stream's shape check, or nil

	some     bool // the JSON check saw a byte
	verified bool // io.EOF is a verified end (false: a close-delimited body)
	ended    bool // the verified end was reached
	full     bool // a whole body was read (below)
	err      error
	// breach is, on the server, the rejection to answer. Atomic: the
	// Middleware asks for it when the handler has returned, and a handler
	// may return while its body is still read (http.TimeoutHandler does).
	breach atomic.Pointer[limits.Error]

	// whole bodies, once read (full)
	chunks chunk.List // released by whoever leaves the guard last
	i, off int        // the next byte is chunks.Chunk(i)[off]
	size   int64

	// deadline
	timer   *time.Timer // client, when the source lends no Timer
	start   time.Time   // when the body's own clock started: the client's at Open, the server's see ownsClock
	expired atomic.Bool // client: the timer fired
	aborted atomic.Bool // the source was closed
	watched atomic.Bool // in the watchdog, until unwatch (see watchdog.go)
	// the watchdog's (server, whole bodies), under dl:
	settled     atomic.Bool // the read ended, no interrupt may come (stored under dl, or where none can come; loaded without it by unwatch and fence)
	interrupted bool        // the watchdog set the deadline to the past
	started     bool        // server: the first Read came
	armed       bool        // server: a read deadline is set
	// dl orders the connection's read deadline against the body's end of
	// life: a deadline is set or cleared under dl only while the body is
	// not closed, and Finish and Close pass through dl after closing, so
	// once they returned no Read still in progress touches the connection
	// (see [Body.Finish]).
	dl sync.Mutex

	watch watchEntry // the watchdog's place (guarded by the watchdog's mu)
}

// Usage returns the body's usage record.
func (b *Body) Usage() *Usage { return &b.usage }

var readers = sync.Pool{New: func() any { return new(decoder.Reader) }}

var checkers = sync.Pool{New: func() any { return new(decoder.JSONChecker) }}

// Source returns the Source b will be opened with: a caller may fill it in
// place and pass it to Open, which then copies nothing (a Source is over
// 200 bytes, and the server opens one per request).
func (b *Body) Source() *Source { return &b.src }

// Open makes b the body src describes under cfg, and starts its timer; src
// may be b.Source(). It reads nothing. It fails only on what the
// Content-Encoding declares: too many layers or an unsupported coding (the
// budget and the options were validated with cfg); b then holds nothing
// (its Source is cleared) and the source is left to the caller.
func (b *Body) Open(cfg *Config, src *Source) *limits.Error {
	if src != &b.src {
		b.src = *src
	}
	b.cfg, b.verified = cfg, true
	src = &b.src
	if !exact(cfg, src) {
		if err := b.openDecoder(); err != nil {
			b.cfg, b.src, b.verified = nil, Source{}, false
			return err
		}
	}
	if src.JSON && cfg.JSON != nil && src.Mode == Stream {
		b.json = checkers.Get().(*decoder.JSONChecker)
		b.json.Reset(*cfg.JSON) // validated with the Config
	}
	b.armed = !src.ArmedAt.IsZero() && !src.Watched
	switch {
	case cfg.Side == Client && src.Budget.Timeout > 0:
		b.start = time.Now()
		if src.Timer != nil {
			src.Timer.Start(src.Budget.Timeout)
		} else {
			b.timer = time.AfterFunc(src.Budget.Timeout, b.Expire)
		}
	case ownsClock(cfg.Side, src):
		b.start = src.ArmedAt
		if src.Watched {
			b.watched.Store(true)
			watch.add(b, sat.Add(sinceEpoch(src.ArmedAt), int64(src.Budget.Timeout)))
		}
	}
	return nil
}

// openDecoder takes a decoder from the pool for the body's coding.
func (b *Body) openDecoder() *limits.Error {
	d := readers.Get().(*decoder.Reader)
	// A whole request body under the connection's read deadline checks
	// the time once, at its end (see late); its decoder reads no clock
	// per Read.
	db := b.src.Budget
	if ownsClock(b.cfg.Side, &b.src) {
		db.Timeout = 0
	}
	if err := d.Reset(b.src.Body, b.src.Encoding, db, b.cfg.Decoder); err != nil {
		readers.Put(d)
		return err
	}
	b.d = d
	if b.src.SizeHint > 0 {
		d.SetSizeHint(b.src.SizeHint)
	}
	if b.cfg.Decoder.Charges() {
		d.SetPeers(b.src.Peers)
		if b.src.InFlightWait != 0 {
			d.SetInFlightWait(b.src.Ctx, b.src.InFlightWait)
		}
	}
	return nil
}

// ownsClock reports whether the body bounds its time itself rather than
// its decoder: a request body read whole under a read deadline of the
// connection (set by the Middleware, or by the watchdog when the read
// outlasts it), which ends any read of the peer's bytes at the deadline
// (the body checks its end against it, see late).
// A streaming body's deadline is set at the handler's first Read, which
// may fail, and a client body's source may ignore the timer's cancel
// (a Base of the caller's): their decoders keep the clock, checked at
// every Read.
func ownsClock(side Side, src *Source) bool {
	return side == Server && src.Mode != Stream && src.Budget.Timeout > 0 && !src.ArmedAt.IsZero()
}

// EndMarked reports whether the body's codings mark its end themselves
// (see decoder.Reader.EndMarked). Call it before the first Read.
func (b *Body) EndMarked() bool { return b.d.EndMarked() }

// RequireMarkedEnd makes a body with no bytes fail: its coding is the only
// proof of its end (see decoder.Reader.RequireMarkedEnd). Call it before
// the first Read.
func (b *Body) RequireMarkedEnd() { b.d.RequireMarkedEnd() }

// Unverified records that the body's end cannot be verified (a
// close-delimited body accepted as such): its usage never reports it
// verified.
func (b *Body) Unverified() { b.verified = false }

// Breach returns, on the server, the rejection to answer after a failed
// read, or nil when there is none or the client is gone. It is safe to
// call while a Read is in progress in another goroutine.
func (b *Body) Breach() *limits.Error { return b.breach.Load() }

// Size returns the decoded size of a whole body that was read.
func (b *Body) Size() int64 { return b.size }

// Expire runs when Budget.Timeout elapses on the client: cancelling the
// request's context makes the blocked read return and closes the
// connection. It is safe to call while a Read is in progress.
func (b *Body) Expire() {
	b.expired.Store(true)
	b.src.Cancel()
}

// Read reads decoded bytes: as they come (Stream) or from the verified
// whole body (Whole, Lazy).
func (b *Body) Read(p []byte) (n int, err error) {
	if err := b.g.enter(); err != nil {
		return 0, b.closedErr(err)
	}
	done := false
	defer func() {
		if b.leave(done) && err != nil && err != io.EOF && b.cfg.Side == Client {
			err = ErrClosed // the Read that Close cut short
		}
	}()
	switch {
	case b.src.Mode == Stream:
		n, err = b.readStream(p)
	case b.open() == nil:
		n, err = b.readFull(p)
	default:
		err = b.err
	}
	done = true
	return n, err
}

// leave ends a Read, WriteTo or ReadAll that entered the guard; its
// caller defers it, so that it runs however the call ends. After a panic
// (done false) the decoder's state is dropped. If Close came meanwhile,
// the state is released here, and leave reports it.
func (b *Body) leave(done bool) (closed bool) {
	if !done {
		b.broken() // a panic: the decoder's state cannot be trusted
	}
	if b.g.leave() {
		b.release()
		return true
	}
	return false
}

// WriteTo writes the rest of a whole body to w without an intermediate
// buffer; a Close from another goroutine takes effect between writes. A
// streaming body is copied through a buffer, as io.Copy would.
func (b *Body) WriteTo(w io.Writer) (n int64, err error) {
	if b.src.Mode == Stream {
		return io.Copy(w, readerOnly{b})
	}
	if err := b.g.enter(); err != nil {
		return 0, b.closedErr(err)
	}
	done := false
	defer func() { b.leave(done) }()
	if err = b.open(); err == nil {
		n, err = b.writeFull(w)
	}
	done = true
	return n, err
}

// readerOnly hides WriteTo from io.Copy.
type readerOnly struct{ io.Reader }

// ReadAll reads a Whole body to its verified end and checks its shape; the
// owner calls it before anyone else can reach the body. Afterwards the body
// is served from its chunks, the decoder is back in its pool and, on the
// client, the connection is done with. On error nothing is held but the
// source, which Close closes.
func (b *Body) ReadAll() (err error) {
	if err := b.g.enter(); err != nil {
		return b.closedErr(err)
	}
	done := false
	defer func() { b.leave(done) }()
	err = b.readAll()
	done = true
	return err
}

// Take returns the rest of a whole body and leaves it at its end, without
// copies where it can: a body not yet read from is handed over by
// [chunk.List.Join] (its one chunk as it is, or all of them joined once).
// The rest of a body partly read is copied out and the chunks are
// released. Its in-flight charge ends: the bytes are the caller's.
func (b *Body) Take() ([]byte, error) {
	if err := b.g.enter(); err != nil {
		return nil, b.closedErr(err)
	}
	done := false
	defer func() { b.leave(done) }()
	if err := b.open(); err != nil {
		done = true
		return nil, err
	}
	var out []byte
	if b.i == 0 && b.off == 0 {
		out = b.chunks.Join()
	} else {
		out = make([]byte, 0, b.rest())
		for i := b.i; i < b.chunks.Len(); i++ {
			out = append(out, b.chunks.Chunk(i)[b.off:]...)
			b.off = 0
		}
		b.chunks.Release()
	}
	b.i, b.off = 0, 0 // the list is empty now
	done = true
	return out, nil
}

// Close ends the body: it aborts a Read in progress (on the client it
// cancels the request and closes the connection's body; on the server it
// closes the request's body, which ends a blocked Read where the server
// allows) and releases the decoder, chunks and in-flight charge now or, if
// a Read is in progress, when that Read returns. Reads after Close fail.
// Close is idempotent and safe to call from another goroutine.
func (b *Body) Close() error {
	first, release := b.g.close()
	if !first {
		return nil
	}
	b.unwatch()
	b.fence()
	err := b.abort()
	if release {
		b.release()
	}
	if b.src.Mode != Stream {
		return nil // the body was, or never will be, read off the source
	}
	return err
}

// Finish ends the body's life without closing its source: a server calls
// it when the handler has returned (closing a request body with unread
// bytes would make net/http read them). Everything the body holds goes
// back, now or when a Read still in progress returns. Once Finish returned,
// the body never sets or clears the connection's read deadline again, even
// from a Read that outlives the handler (one behind http.TimeoutHandler):
// net/http then owns it, for the next request's headers.
func (b *Body) Finish() {
	_, release := b.g.close()
	b.unwatch()
	b.fence()
	if release {
		b.release()
	}
}

// fence waits for a change of the connection's read deadline in progress;
// the body is closed, so no later one starts.
func (b *Body) fence() {
	if !b.settled.Load() { // settled: a watched body whose read ended, no change of the deadline can be in progress
		b.passDeadlineLock()
	}
}

// passDeadlineLock waits until no change of the read deadline holds dl.
func (b *Body) passDeadlineLock() {
	b.dl.Lock()
	defer b.dl.Unlock()
}

// setReadDeadline sets the connection's read deadline (zero: none) unless
// the body is closed, and reports whether it did.
func (b *Body) setReadDeadline(t time.Time) bool {
	b.dl.Lock()
	defer b.dl.Unlock()
	return !b.g.closed() && b.src.RC.SetReadDeadline(t) == nil
}

// closedErr is what a Read returns when the guard refuses it.
func (b *Body) closedErr(err error) error {
	if err == ErrClosed && b.cfg != nil && b.cfg.ClosedErr != nil {
		return b.cfg.ClosedErr
	}
	return err
}

// release frees the decoder, the JSON checker and the chunks, giving back
// the body's in-flight charge; only the guard's owner calls it.
func (b *Body) release() {
	b.releaseDecoder()
	b.chunks.Release()
}

// releaseDecoder returns the decoder and the JSON checker to their pools.
func (b *Body) releaseDecoder() {
	if b.d != nil || b.json != nil { // an exact body has neither: no call
		b.recycle()
	}
}

// recycle is releaseDecoder's work.
func (b *Body) recycle() {
	if b.d != nil {
		b.d.Recycle()
		readers.Put(b.d)
		b.d = nil
	}
	if b.json != nil {
		checkers.Put(b.json)
		b.json = nil
	}
}

// broken runs when a panic leaves a Read: the decoder's state cannot be
// trusted, so it is dropped rather than pooled, the in-flight charge is
// given back, and every later Read fails. On the client the connection is
// dropped too: the panic may skip every Close (RoundTrip's own read of a
// whole body, http.Client's of a redirect's), and a body that can never be
// read again must not keep its connection and context alive. (On the
// server net/http closes the connection of a handler that panicked.)
func (b *Body) broken() {
	if b.cfg.Side == Client {
		b.abort()
	}
	b.unwatch()
	if b.d != nil {
		b.d.Abandon()
		b.d = nil
	}
	b.json = nil
	b.chunks.Release()
	b.full = false
	if b.err == nil {
		b.err = errBroken
	}
}

// errBroken is the sticky error of a body whose Read panicked.
var errBroken = errors.New("boundhttp: body unusable after a panic in Read")

// abort makes a blocked read of the source return: on the client it stops
// the timer and cancels the request, and it closes the source. It is
// idempotent and safe while a Read is in progress.
func (b *Body) abort() error {
	if b.aborted.Swap(true) {
		return nil
	}
	b.stopTimer()
	if b.src.Cancel != nil {
		b.src.Cancel()
	}
	if b.src.Closer != nil {
		return b.src.Closer.Close()
	}
	return nil
}

// Whole reports whether b is a whole body (Whole or Lazy), which
// [Body.Take] can hand over.
func (b *Body) Whole() bool { return b.src.Mode != Stream && b.cfg != nil }

// stopTimer disarms the client's Budget.Timeout.
func (b *Body) stopTimer() {
	if b.timer != nil {
		b.timer.Stop()
	}
	if b.src.Timer != nil {
		b.src.Timer.Stop()
	}
}
