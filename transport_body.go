package boundhttp

import (
	"context"
	"io"
	"sync/atomic"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/limits"
)

// bodyReader is a response body being decoded: in streaming mode it is the
// Body the caller reads; in whole-body mode RoundTrip (or, for a redirect,
// the first Read of a lazyBody) reads it to the end.
//
// Close is safe to call from another goroutine while a Read is in progress:
// it cancels the request's context and closes the connection's body, which
// makes the blocked Read return, and the decoder goes back to its pool only
// once that Read has returned (see readGuard).
type bodyReader struct {
	g        readGuard
	d        *decoding.Reader // reads raw, which it never closes
	raw      io.Closer        // the body the base transport returned
	c        *usageCell
	cancel   context.CancelFunc
	verified bool // whether io.EOF is a verified end (false for close-delimited bodies)
	timer    *time.Timer
	timeout  time.Duration
	start    time.Time // when the response headers arrived
	expired  atomic.Bool
	aborted  atomic.Bool
	ended    bool // the verified end was reached; only the reader touches it
}

// newBodyReader returns the decoded body of raw; it is closed by Close.
func newBodyReader(raw io.ReadCloser, ce string, b limits.Budget, opts []decoding.Option,
	c *usageCell, cancel context.CancelFunc, verified bool) (*bodyReader, error) {
	d, err := decoding.NewReader(readerOnly{raw}, ce, b, opts...)
	if err != nil {
		return nil, err
	}
	return &bodyReader{d: d, raw: raw, c: c, cancel: cancel, verified: verified}, nil
}

// readerOnly hides the Close method of a body from the decoder: the
// bodyReader closes it itself, from whichever goroutine calls Close.
type readerOnly struct{ io.Reader }

// startTimer arms Budget.Timeout. The Transport calls it when the response
// headers arrive, so the timeout covers the whole body, including the wait
// for its first byte.
func (b *bodyReader) startTimer(timeout time.Duration) {
	b.timeout, b.start = timeout, time.Now()
	b.timer = time.AfterFunc(timeout, b.expire)
}

// expire runs when Budget.Timeout elapses: cancelling the request's context
// makes the blocked read return and closes the connection.
func (b *bodyReader) expire() {
	b.expired.Store(true)
	b.cancel()
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if err := b.g.enter(); err != nil {
		return 0, err
	}
	n, err := b.d.Read(p)
	err = b.after(err)
	if b.g.leave() {
		// Closed during this Read: the decoder is ours to release.
		b.release()
		if err != nil && err != io.EOF {
			err = errBodyClosed
		}
	}
	return n, err
}

// readAll reads the body to its verified end, as whole-body mode does. It
// does not take the guard: its caller (RoundTrip, or a lazyBody holding its
// own guard) owns the body.
func (b *bodyReader) readAll() (chunk.List, error) {
	chunks, err := chunk.ReadAll(b.d)
	if err == nil {
		err = io.EOF
	}
	if err = b.after(err); err != io.EOF {
		chunks.Release()
		return chunk.List{}, err
	}
	return chunks, nil
}

// after records the usage so far and turns a read cut short by the timer,
// or an end reached after the deadline, into a timeout error. It runs after
// every Read: a few atomic stores, no lock, no allocation. Once the end was
// reached in time it stays reached: a Read after io.EOF returns io.EOF
// again, however late, and the usage stays verified.
func (b *bodyReader) after(err error) error {
	if b.ended && err == io.EOF {
		return io.EOF
	}
	switch {
	case err == nil:
	case err == io.EOF:
		if b.timeout > 0 && time.Since(b.start) > b.timeout {
			err = b.timeoutError(nil)
		}
	case b.expired.Load():
		err = b.timeoutError(err)
	}
	b.c.set(b.d.Usage(), err == io.EOF && b.verified)
	if err == io.EOF {
		b.ended = true
		if b.timer != nil {
			b.timer.Stop() // the deadline no longer applies
		}
	}
	return err
}

func (b *bodyReader) timeoutError(cause error) error {
	return &limits.Error{Stage: limits.StageTimeout, Limit: b.timeout.Milliseconds(),
		Observed: time.Since(b.start).Milliseconds(), Err: cause}
}

// Close aborts a Read in progress, closes the connection's body and
// releases the decoder now or, if a Read is in progress, when it returns.
// Reads after Close fail. Close is idempotent and safe to call from another
// goroutine.
func (b *bodyReader) Close() error {
	first, release := b.g.close()
	if !first {
		return nil
	}
	err := b.abort()
	if release {
		b.release()
	}
	return err
}

// abort stops the timer and makes a blocked read of the connection return.
// It is idempotent and safe while a Read is in progress.
func (b *bodyReader) abort() error {
	if b.aborted.Swap(true) {
		return nil
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.cancel()
	return b.raw.Close()
}

// release returns the decoder to its pool; only the guard's owner calls it.
func (b *bodyReader) release() { b.d.Close() }

func (b *bodyReader) cell() *usageCell { return b.c }

var _ io.ReadCloser = (*bodyReader)(nil)
