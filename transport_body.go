package boundhttp

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/limits"
)

// bodyReader is a response body being decoded: in streaming mode it is the
// Body the caller reads; in whole-body mode RoundTrip reads it to the end.
type bodyReader struct {
	d       *decoding.Reader
	src     io.Closer // the base transport's body, which d reads
	guard   readGuard // Close from another goroutine during a Read
	c       *usageCell
	cancel  context.CancelFunc
	timer   *time.Timer
	timeout time.Duration
	start   time.Time // when the timer started
	expired atomic.Bool
	once    sync.Once
}

// startTimer arms Budget.Timeout, from the response headers on.
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

// Read reads decoded bytes. It may run while Close is called from another
// goroutine.
func (b *bodyReader) Read(p []byte) (int, error) {
	if !b.guard.enter() {
		return 0, decoding.ErrClosed
	}
	n, err := b.d.Read(p)
	err = b.after(err)
	if b.guard.leave() {
		b.d.Close() // Close came during this Read: release now
	}
	return n, err
}

func (b *bodyReader) readAll() (chunk.List, error) {
	data, err := chunk.ReadAll(b.d)
	if err == nil {
		b.c.set(b.d.Usage(), true)
		return data, nil
	}
	return chunk.List{}, b.after(err)
}

// after records the usage and turns a read cut short by the timer into a
// timeout error.
func (b *bodyReader) after(err error) error {
	if err == nil {
		return nil
	}
	if err != io.EOF && b.expired.Load() {
		err = &limits.Error{Stage: limits.StageTimeout, Limit: b.timeout.Milliseconds(),
			Observed: time.Since(b.start).Milliseconds(), Err: err}
	}
	b.c.set(b.d.Usage(), err == io.EOF)
	return err
}

// Close closes the base transport's body first, which ends a Read blocked
// in it, and returns the decoders to their pools only when no Read can
// touch them: now, or as the Read in progress returns.
func (b *bodyReader) Close() error {
	var err error
	b.once.Do(func() {
		if b.timer != nil {
			b.timer.Stop()
		}
		_, release := b.guard.close()
		err = b.src.Close()
		if release {
			b.d.Close()
		}
		b.cancel()
	})
	return err
}

func (b *bodyReader) cell() *usageCell { return b.c }

var _ io.ReadCloser = (*bodyReader)(nil)
