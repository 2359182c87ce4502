package boundhttp

import (
	"errors"
	"io"

	"github.com/boundhttp/boundhttp/internal/chunk"
)

// fullBody serves a verified, decoded body from memory, in the chunks it
// was read into, and returns them to their pool on Close.
type fullBody struct {
	chunks chunk.List // released by Close
	i, off int        // the next byte is chunks.Chunk(i)[off]
	size   int64
	c      *usageCell
	guard  readGuard // Close from another goroutine during a Read
}

// errBodyClosed is returned by reads after Close.
var errBodyClosed = errors.New("boundhttp: read on closed body")

// newFullBody returns a body serving chunks, recording into c.
func newFullBody(chunks chunk.List, c *usageCell) *fullBody {
	return &fullBody{chunks: chunks, c: c, size: chunks.Size()}
}

// Read reads the next bytes. It may run while Close is called from another
// goroutine; a Read after Close fails.
func (f *fullBody) Read(p []byte) (int, error) {
	if !f.guard.enter() {
		return 0, errBodyClosed
	}
	n, err := f.read(p)
	if f.guard.leave() {
		f.chunks.Release() // Close came during this Read
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
// Like Read, it may run while Close is called; the chunks return to their
// pool when it has returned.
func (f *fullBody) WriteTo(w io.Writer) (int64, error) {
	if !f.guard.enter() {
		return 0, errBodyClosed
	}
	n, err := f.writeTo(w)
	if f.guard.leave() {
		f.chunks.Release()
	}
	return n, err
}

func (f *fullBody) writeTo(w io.Writer) (int64, error) {
	var n int64
	for f.i < f.chunks.Len() {
		m, err := w.Write(f.chunks.Chunk(f.i)[f.off:])
		n += int64(m)
		f.advance(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close returns the chunks to their pool, or has the Read or WriteTo in
// progress return them; reads after Close fail.
func (f *fullBody) Close() error {
	if _, release := f.guard.close(); release {
		f.chunks.Release()
	}
	return nil
}

func (f *fullBody) cell() *usageCell { return f.c }

var _ io.ReadCloser = (*fullBody)(nil)
