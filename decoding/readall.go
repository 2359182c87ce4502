package decoding

import (
	"io"

	"github.com/boundhttp/boundhttp/limits"
)

// ReadAll reads, decodes and verifies the whole body r, encoded with the
// codings of contentEncoding, against b. It returns the complete body, or an
// error and no bytes: never a prefix.
//
// Memory: no buffer larger than b.MaxDecodedBytes is allocated, whatever a
// header declares; the body is read into chunks that grow geometrically
// (each capped by what remains of the limit) and joined once at the end.
// ReadAll does not close r.
func ReadAll(r io.Reader, contentEncoding string, b limits.Budget, opts ...Option) ([]byte, error) {
	d, err := NewReader(r, contentEncoding, b, opts...)
	if err != nil {
		return nil, err
	}
	return d.ReadAll()
}

// ReadAll reads the rest of d to its verified end, as the package-level
// [ReadAll] does, and returns the decoders to their pools. It does not close
// the source.
func (d *Reader) ReadAll() ([]byte, error) {
	chunks, err := d.ReadAllChunks()
	if err != nil {
		return nil, err
	}
	switch len(chunks) {
	case 0:
		return []byte{}, nil
	case 1:
		return chunks[0], nil
	}
	var n int
	for _, c := range chunks {
		n += len(c)
	}
	out := make([]byte, 0, n)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}

// Chunk sizes of ReadAllChunks: the first is small so that small bodies stay
// cheap, later ones double up to maxChunk.
const (
	minChunk = 512
	maxChunk = 64 << 10
)

// ReadAllChunks reads the rest of d to its verified end and returns the
// decoded bytes as consecutive chunks, or an error and no bytes. It avoids
// the copying of a growing buffer: each chunk is allocated once, at most
// the size of what remains of the decoded limit. It returns the decoders to
// their pools and does not close the source.
func (d *Reader) ReadAllChunks() ([][]byte, error) {
	defer d.releaseDecoders()
	remaining := d.b.MaxDecodedBytes - d.top.out
	size := int64(minChunk)
	if d.sizeHint > 0 {
		size = min(d.sizeHint, remaining)
	}
	var chunks [][]byte
	var probe [minChunk]byte
	for {
		// Before allocating a chunk, look for the end with a small read,
		// so that a body that ends at a chunk boundary costs no empty chunk.
		p := probe[:min(int64(len(probe)), remaining+1)]
		n, err := d.Read(p)
		if int64(n) > remaining {
			return nil, io.ErrNoProgress // unreachable: the Reader stops at the limit
		}
		if err == io.EOF {
			if n > 0 {
				chunks = append(chunks, append([]byte(nil), p[:n]...))
			}
			return chunks, nil
		}
		if err != nil {
			return nil, err
		}
		buf := make([]byte, min(max(size, int64(n)), remaining))
		copy(buf, p[:n])
		m, err := d.fill(buf[n:])
		m += n
		remaining -= int64(m)
		chunks = append(chunks, buf[:m])
		switch err {
		case nil:
			size = min(size*2, maxChunk)
		case io.EOF:
			return chunks, nil
		default:
			return nil, err
		}
	}
}

// SetSizeHint tells [Reader.ReadAll] and [Reader.ReadAllChunks] how many
// decoded bytes to expect, for example the Content-Length of an identity
// body. It sizes the first chunk only, capped by what remains of the decoded
// limit: a wrong hint costs memory within the limit, never correctness.
func (d *Reader) SetSizeHint(n int64) { d.sizeHint = n }

// fill reads until buf is full or the body ended; io.EOF means the
// verified end.
func (d *Reader) fill(buf []byte) (int, error) {
	var n int
	for n < len(buf) {
		m, err := d.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
