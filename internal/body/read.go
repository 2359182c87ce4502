package body

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// readStream is a Read of a streaming body: decoded bytes, checked by the
// JSON layer, with the outcome recorded. Its caller holds the guard.
func (b *Body) readStream(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.ended {
		// Once the end was reached in time it stays reached, however late
		// the next Read comes.
		return 0, io.EOF
	}
	b.firstRead()
	n, err := b.d.Read(p)
	if b.json != nil {
		if cerr := b.checkStream(p[:n], err); cerr != nil {
			n, err = 0, cerr
		}
	}
	return n, b.outcome(err)
}

// checkStream feeds the JSON layer the bytes of one Read; at a verified
// end it checks the document ended well. A body that ends with no bytes at
// all is no body: it ends unchecked.
func (b *Body) checkStream(p []byte, err error) error {
	if len(p) > 0 {
		b.some = true
		if _, cerr := b.json.Write(p); cerr != nil {
			return cerr
		}
	}
	if err == io.EOF && b.some {
		return b.json.Close()
	}
	return nil
}

// readAll reads a whole body into chunks, checks its shape and makes it
// servable; the connection and the decoder are done with either way. Its
// caller holds the guard.
//
// The chunks belong to the body from the moment the decoder hands them
// over, before the shape check and the source's Close: whatever panics
// after that (a check, a Close of someone else's body), the guard's
// deferred leave releases them and their in-flight charge with the body.
func (b *Body) readAll() error {
	var err error
	if b.d != nil {
		b.chunks, err = b.d.ReadAllChunks()
	} else {
		err = b.readExact()
	}
	if err == nil {
		err = io.EOF
	}
	if err == io.EOF && b.src.JSON && b.cfg.JSON != nil {
		if cerr := checkChunks(b.chunks, *b.cfg.JSON); cerr != nil {
			err = cerr
		}
	}
	err = b.outcome(err)
	if b.cfg.Side == Client {
		b.abort()
	}
	b.releaseDecoder()
	if err != io.EOF {
		b.chunks.Release()
		b.size = 0 // an exact body's count of bytes read (see readExact): no size
		return err
	}
	b.size, b.full = b.chunks.Size(), true
	return nil
}

// open reads a Lazy body on first use; for a Whole body ReadAll did. It
// returns the sticky error of a body that failed.
func (b *Body) open() error {
	if b.full {
		return nil // inlined: a body served from its chunks takes no call
	}
	return b.load()
}

// load is open's work for a body not yet read: a Lazy body is read now.
func (b *Body) load() error {
	if b.err == nil && b.src.Mode == Lazy && b.d != nil {
		b.readAll()
	}
	if !b.full && b.err == nil {
		b.err = ErrClosed // a whole body that was never read
	}
	return b.err
}

// outcome records what a read of the source came to and returns the
// error the reader gets: on the client a read cut short by the timer, or an
// end reached after the deadline, becomes a timeout; on the server a
// failure is classified for the answer. A failure is sticky.
func (b *Body) outcome(err error) error {
	u := b.counts()
	if err == nil {
		b.usage.Set(u, false)
		return nil
	}
	// The read ended: no interrupt comes after this, and one that came
	// before it means the deadline passed first (see unwatch).
	interrupted := b.unwatch()
	if err == io.EOF && !interrupted && !b.late() {
		b.ended = true
		b.usage.Set(u, b.verified)
		b.stopDeadline()
		return io.EOF
	}
	return b.failed(u, err, interrupted)
}

// failed records a read of the source that failed, or reached its end
// after the deadline, and returns the sticky error the reader gets (see
// outcome).
func (b *Body) failed(u limits.Usage, err error, interrupted bool) error {
	switch {
	case err == io.EOF: // the end, reached after the deadline
		err = b.timeoutError(nil)
	case interrupted && errors.Is(err, os.ErrDeadlineExceeded):
		// The watchdog's deadline ended the read, also where the failure
		// comes up through a layer below that labels it with its own
		// budget (an outer Middleware's streamed body): the timeout is
		// this body's.
		err = b.timeoutError(deadlineError{err})
	case b.cfg.Side == Client && b.expired.Load():
		err = b.cutByTimer(err)
	}
	b.usage.Set(u, false)
	if b.cfg.Side == Server {
		e := serverError(b.src.Ctx, err, b.src.Budget.Timeout, b.start)
		b.breach.Store(e)
		if e != nil && b.cfg.Wrap != nil && b.src.Mode == Stream {
			err = b.cfg.Wrap(e)
		}
	}
	b.err = err
	return err
}

// firstRead starts the server's timeout at the first Read of a streaming
// body, not at the handler's start: the handler may work before it reads.
// Until then the deadline the Middleware set stays, for the rest of a body
// the handler never reads.
func (b *Body) firstRead() {
	if b.cfg.Side != Server || b.started {
		return
	}
	b.started = true
	if t := b.src.Budget.Timeout; t > 0 && b.src.RC != nil {
		b.armed = b.setReadDeadline(time.Now().Add(t))
	}
}

// late reports whether a body that keeps its own clock (see ownsClock)
// reached its end after its deadline.
func (b *Body) late() bool {
	return !b.start.IsZero() && time.Since(b.start) > b.src.Budget.Timeout
}

// stopDeadline ends the deadline of a body that reached its verified end.
func (b *Body) stopDeadline() {
	if b.timer != nil || b.src.Timer != nil || b.armed { // inlined: a watched body has none of them
		b.stopClocks()
	}
}

// stopClocks is stopDeadline's work.
func (b *Body) stopClocks() {
	b.stopTimer()
	if b.armed {
		b.setReadDeadline(time.Time{})
		b.armed = false
	}
}

// cutByTimer returns the error of a client read that failed after the
// body's timer fired, labelled by its true cause. A failure of the source
// (the request the timer cancelled; a connection cut short) is the timer's
// doing: a timeout. A verdict the decoder reached keeps its stage: a limit
// of the budget, a body that could never fit in InFlight, the decoder's
// own timeout (never wrapped in a second one). A wait for room in InFlight
// that the timer ended stays stage inflight, as one ended by the request's
// deadline does, its cause the timeout (so Timeout reports true).
func (b *Body) cutByTimer(err error) error {
	var le *limits.Error
	if !errors.As(err, &le) || sourceCut(le) {
		return b.timeoutError(err)
	}
	if le.Stage == limits.StageInFlight && errors.Is(le.Err, context.Canceled) {
		e := *le
		e.Err = b.timeoutError(nil)
		return &e
	}
	return err
}

// sourceCut reports whether e is the decoder's report of a source that
// ended before its declared length (what a cancelled connection may
// look like), not a verdict on the bytes.
func sourceCut(e *limits.Error) bool {
	return e.Stage == limits.StageIntegrity && e.Encoding == "" && e.Err == io.ErrUnexpectedEOF
}

func (b *Body) timeoutError(cause error) error {
	return &limits.Error{Stage: limits.StageTimeout, Limit: b.src.Budget.Timeout.Milliseconds(),
		Observed: time.Since(b.start).Milliseconds(), Err: cause}
}

// checkChunks checks a whole body held in chunks. An empty body (no
// decoded bytes) is no body, as net/http presents a Content-Length of 0
// (http.NoBody, which the Middleware hands on unchecked): it passes, and
// the handler decides what a bodiless request means.
func checkChunks(chunks chunk.List, l limits.JSON) error {
	if chunks.Size() == 0 {
		return nil
	}
	c := checkers.Get().(*decoder.JSONChecker)
	defer checkers.Put(c)
	if err := c.Reset(l); err != nil {
		return err
	}
	for i := range chunks.Len() {
		if _, err := c.Write(chunks.Chunk(i)); err != nil {
			return err
		}
	}
	return c.Close()
}

// readFull reads from the chunks of a whole body.
func (b *Body) readFull(p []byte) (int, error) {
	if b.i == b.chunks.Len() {
		return 0, io.EOF
	}
	var n int
	for n < len(p) && b.i < b.chunks.Len() {
		m := copy(p[n:], b.chunks.Chunk(b.i)[b.off:])
		n += m
		b.advance(m)
	}
	return n, nil
}

// writeFull writes the rest of a whole body to w; a Close from another
// goroutine takes effect between writes.
func (b *Body) writeFull(w io.Writer) (int64, error) {
	var n int64
	var err error
	for b.i < b.chunks.Len() && err == nil {
		if b.g.closed() {
			return n, b.closedErr(ErrClosed)
		}
		c := b.chunks.Chunk(b.i)[b.off:]
		var m int
		m, err = w.Write(c)
		n += int64(m)
		b.advance(m)
		if m < len(c) && err == nil {
			err = io.ErrShortWrite
		}
	}
	return n, err
}

// advance moves past m bytes of the current chunk.
func (b *Body) advance(m int) {
	if b.off += m; b.off == len(b.chunks.Chunk(b.i)) {
		b.i, b.off = b.i+1, 0
	}
}

// rest returns the bytes of a whole body not yet read.
func (b *Body) rest() int64 {
	n := b.size
	for i := range b.i {
		n -= int64(len(b.chunks.Chunk(i)))
	}
	return n - int64(b.off)
}
