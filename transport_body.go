package boundhttp

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// bodyReader is a response body being decoded: in streaming mode it is the
// Body the caller reads; in whole-body mode RoundTrip reads it to the end.
type bodyReader struct {
	d       *decoding.Reader
	c       *usageCell
	cancel  context.CancelFunc
	timer   *time.Timer
	timeout time.Duration
	start   time.Time
	expired atomic.Bool
	once    sync.Once
}

// expire runs when Budget.Timeout elapses: cancelling the request's context
// makes the blocked read return and closes the connection.
func (b *bodyReader) expire() {
	b.expired.Store(true)
	b.cancel()
}

func (b *bodyReader) Read(p []byte) (int, error) {
	if b.start.IsZero() {
		b.start = time.Now()
	}
	n, err := b.d.Read(p)
	return n, b.after(err)
}

func (b *bodyReader) readAll() ([][]byte, error) {
	b.start = time.Now()
	data, err := b.d.ReadAllChunks()
	if err == nil {
		b.c.set(b.d.Usage(), true)
		return data, nil
	}
	return nil, b.after(err)
}

// after records the usage and turns a read cut short by the timer into a
// timeout error.
func (b *bodyReader) after(err error) error {
	if err == nil {
		return nil
	}
	if err != io.EOF && b.expired.Load() {
		el := time.Since(b.start)
		err = &limits.Error{Stage: limits.StageTimeout, Limit: b.timeout.Milliseconds(),
			Observed: max(el, b.timeout).Milliseconds(), Err: err}
	}
	b.c.set(b.d.Usage(), err == io.EOF)
	return err
}

func (b *bodyReader) Close() error {
	var err error
	b.once.Do(func() {
		if b.timer != nil {
			b.timer.Stop()
		}
		err = b.d.Close()
		b.cancel()
	})
	return err
}

func (b *bodyReader) cell() *usageCell { return b.c }

// fullBody serves a verified, decoded body from memory, in the chunks it
// was read into.
type fullBody struct {
	chunks [][]byte
	size   int64
	c      *usageCell
}

func (f *fullBody) Read(p []byte) (int, error) {
	if len(f.chunks) == 0 {
		return 0, io.EOF
	}
	var n int
	for n < len(p) && len(f.chunks) > 0 {
		m := copy(p[n:], f.chunks[0])
		n += m
		if f.chunks[0] = f.chunks[0][m:]; len(f.chunks[0]) == 0 {
			f.chunks = f.chunks[1:]
		}
	}
	return n, nil
}

// WriteTo writes the rest of the body to w without an intermediate buffer.
func (f *fullBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for len(f.chunks) > 0 {
		m, err := w.Write(f.chunks[0])
		n += int64(m)
		f.chunks[0] = f.chunks[0][m:]
		if err != nil {
			return n, err
		}
		f.chunks = f.chunks[1:]
	}
	return n, nil
}

func (*fullBody) Close() error       { return nil }
func (f *fullBody) cell() *usageCell { return f.c }

var (
	_ io.ReadCloser = (*bodyReader)(nil)
	_ io.ReadCloser = (*fullBody)(nil)
)
