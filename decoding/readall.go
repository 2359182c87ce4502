package decoding

import (
	"io"

	"github.com/boundhttp/boundhttp/limits"
)

// ReadAll reads, decodes and verifies the whole body r, encoded with the
// codings of contentEncoding, against b. It returns the complete body, or an
// error and no bytes: never a prefix.
//
// Memory: the result grows by doubling but never past b.MaxDecodedBytes, so
// no buffer larger than the decoded limit is allocated whatever a header
// declares. ReadAll does not close r.
func ReadAll(r io.Reader, contentEncoding string, b limits.Budget, opts ...Option) ([]byte, error) {
	d, err := NewReader(r, contentEncoding, b, opts...)
	if err != nil {
		return nil, err
	}
	defer d.releaseDecoders()
	return d.readAll(0)
}

// readAll reads d to its verified end. sizeHint, when positive, is a
// expected decoded size used for the first allocation; it is capped by the
// decoded limit.
func (d *Reader) readAll(sizeHint int64) ([]byte, error) {
	limit := d.b.MaxDecodedBytes
	size := int64(512)
	if sizeHint > 0 {
		size = sizeHint
	}
	size = min(size, limit)
	buf := make([]byte, 0, size)
	var one [1]byte
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= limit {
				// Full at the limit: only the end or a breach can follow.
				n, err := d.Read(one[:])
				if err == io.EOF && n == 0 {
					return buf, nil
				}
				if err == nil {
					err = io.ErrNoProgress // unreachable: the limit was passed
				}
				return nil, err
			}
			next := min(max(int64(cap(buf))*2, 512), limit)
			nb := make([]byte, len(buf), next)
			copy(nb, buf)
			buf = nb
		}
		n, err := d.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// ReadAll reads the rest of d to its verified end, as the package-level
// [ReadAll] does, and returns the decoders to their pools. It does not close
// the source.
func (d *Reader) ReadAll() ([]byte, error) {
	defer d.releaseDecoders()
	return d.readAll(0)
}
