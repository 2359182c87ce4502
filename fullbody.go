package boundhttp

import (
	"errors"
	"io"

	"github.com/boundhttp/boundhttp/decoding"
)

// fullBody serves a verified, decoded body from memory, in the chunks it
// was read into, and returns them to their pool on Close.
type fullBody struct {
	chunks [][]byte // never resliced, so that Close can release them
	i, off int      // the next byte is chunks[i][off]
	size   int64
	c      *usageCell
	closed bool
}

// errBodyClosed is returned by reads after Close.
var errBodyClosed = errors.New("boundhttp: read on closed body")

// newFullBody returns a body serving chunks, recording into c.
func newFullBody(chunks [][]byte, c *usageCell) *fullBody {
	f := &fullBody{chunks: chunks, c: c}
	for _, ch := range chunks {
		f.size += int64(len(ch))
	}
	return f
}

func (f *fullBody) Read(p []byte) (int, error) {
	if f.closed {
		return 0, errBodyClosed
	}
	if f.i == len(f.chunks) {
		return 0, io.EOF
	}
	var n int
	for n < len(p) && f.i < len(f.chunks) {
		m := copy(p[n:], f.chunks[f.i][f.off:])
		n += m
		f.advance(m)
	}
	return n, nil
}

// advance moves past m bytes of the current chunk.
func (f *fullBody) advance(m int) {
	if f.off += m; f.off == len(f.chunks[f.i]) {
		f.i, f.off = f.i+1, 0
	}
}

// WriteTo writes the rest of the body to w without an intermediate buffer.
func (f *fullBody) WriteTo(w io.Writer) (int64, error) {
	if f.closed {
		return 0, errBodyClosed
	}
	var n int64
	for f.i < len(f.chunks) {
		m, err := w.Write(f.chunks[f.i][f.off:])
		n += int64(m)
		f.advance(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Close returns the chunks to their pool; reads after Close fail.
func (f *fullBody) Close() error {
	if !f.closed {
		f.closed = true
		decoding.ReleaseChunks(f.chunks)
		f.chunks = nil
	}
	return nil
}

func (f *fullBody) cell() *usageCell { return f.c }

var _ io.ReadCloser = (*fullBody)(nil)
