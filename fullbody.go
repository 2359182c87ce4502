package boundhttp

import (
	"io"

	"github.com/boundhttp/boundhttp/internal/chunk"
)

// fullBody serves a verified, decoded body from memory, in the chunks it
// was read into, and returns them to their pool once it is closed and no
// Read or WriteTo is in progress. Close is safe to call from another
// goroutine while a Read runs; Read and WriteTo have one caller at a time.
type fullBody struct {
	g      readGuard
	chunks chunk.List // released by whoever leaves the guard last
	i, off int        // the next byte is chunks.Chunk(i)[off]
	size   int64
	c      *usageCell
	outer  *readGuard // the guard of a body that serves this one (lazyBody), or nil
}

// newFullBody returns a body serving chunks, recording into c.
func newFullBody(chunks chunk.List, c *usageCell) *fullBody {
	return &fullBody{chunks: chunks, c: c, size: chunks.Size()}
}

func (f *fullBody) Read(p []byte) (int, error) {
	if err := f.g.enter(); err != nil {
		return 0, err
	}
	n, err := f.read(p)
	if f.g.leave() {
		f.chunks.Release()
	}
	return n, err
}

func (f *fullBody) read(p []byte) (int, error) {
	if f.i == f.chunks.Len() {
		return 0, io.EOF
	}
	var n int
	for n < len(p) && f.i < f.chunks.Len() {
		m := copy(p[n:], f.chunks.Chunk(f.i)[f.off:])
		n += m
		f.advance(m)
	}
	return n, nil
}

// advance moves past m bytes of the current chunk.
func (f *fullBody) advance(m int) {
	if f.off += m; f.off == len(f.chunks.Chunk(f.i)) {
		f.i, f.off = f.i+1, 0
	}
}

// WriteTo writes the rest of the body to w without an intermediate buffer.
// A Close from another goroutine takes effect between writes.
func (f *fullBody) WriteTo(w io.Writer) (int64, error) {
	if err := f.g.enter(); err != nil {
		return 0, err
	}
	var n int64
	var err error
	for f.i < f.chunks.Len() && err == nil {
		if f.g.closed() || f.outer != nil && f.outer.closed() {
			err = errBodyClosed
			break
		}
		c := f.chunks.Chunk(f.i)[f.off:]
		var m int
		m, err = w.Write(c)
		n += int64(m)
		f.advance(m)
		if m < len(c) && err == nil {
			err = io.ErrShortWrite
		}
	}
	if f.g.leave() {
		f.chunks.Release()
	}
	return n, err
}

// Close marks the body closed; reads after Close fail. The chunks return to
// their pool now, or when the Read in progress returns.
func (f *fullBody) Close() error {
	if _, release := f.g.close(); release {
		f.chunks.Release()
	}
	return nil
}

func (f *fullBody) cell() *usageCell { return f.c }

var _ io.ReadCloser = (*fullBody)(nil)

// take returns the rest of the body and leaves it at its end. A body not
// yet read from is handed over by [chunk.List.Join]: its one chunk as it is
// (it leaves its pool), or all of them joined into one slice of exactly the
// body's size, after which they go back to their pool. The rest of a body
// partly read is copied out and the chunks are released. Like Read, it may
// run while Close is called.
func (f *fullBody) take() ([]byte, error) {
	if err := f.g.enter(); err != nil {
		return nil, err
	}
	var out []byte
	if f.i == 0 && f.off == 0 {
		out = f.chunks.Join()
	} else {
		out = make([]byte, 0, f.rest())
		for i := f.i; i < f.chunks.Len(); i++ {
			out = append(out, f.chunks.Chunk(i)[f.off:]...)
			f.off = 0
		}
		f.chunks.Release()
	}
	f.i, f.off = 0, 0 // the list is empty now
	if f.g.leave() {
		f.chunks.Release() // Close came during take: nothing is left to release
	}
	return out, nil
}

// rest returns the bytes not yet read.
func (f *fullBody) rest() int64 {
	n := f.size
	for i := range f.i {
		n -= int64(len(f.chunks.Chunk(i)))
	}
	return n - int64(f.off)
}
