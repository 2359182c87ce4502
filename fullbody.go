package boundhttp

import "io"

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

// newFullBody returns a body serving chunks, recording into c.
func newFullBody(chunks [][]byte, c *usageCell) *fullBody {
	f := &fullBody{chunks: chunks, c: c}
	for _, ch := range chunks {
		f.size += int64(len(ch))
	}
	return f
}

var _ io.ReadCloser = (*fullBody)(nil)
