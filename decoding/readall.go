package decoding

import (
	"io"
	"sync"

	"github.com/boundhttp/boundhttp/limits"
)

// ReadAll reads, decodes and verifies the whole body r, encoded with the
// codings of contentEncoding, against b. It returns the complete body, or an
// error and no bytes: never a prefix.
//
// Memory: the body is read into pooled chunks of 512 B to 64 KiB whose
// capacity exceeds the bytes read by less than one chunk, then joined once
// into a slice of exactly the body's size; whatever a header declares, no
// allocation is larger than the bytes decoded plus one chunk. ReadAll does
// not close r.
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
	ReleaseChunks(chunks)
	return out, nil
}

// Chunk sizes of ReadAllChunks: the first is small so that small bodies stay
// cheap, later ones double up to maxChunk. Chunks come from pools, one per
// power-of-two size class.
const (
	minChunk   = 512
	maxChunk   = 64 << 10
	numClasses = 8 // 512 B, 1 KiB, ... 64 KiB
)

var chunkPools [numClasses]sync.Pool // of *[]byte

// getChunk returns a slice of n bytes (n <= maxChunk) whose capacity is
// the smallest size class that holds n.
func getChunk(n int64) []byte {
	c := 0
	for int64(minChunk)<<c < n {
		c++
	}
	if p, ok := chunkPools[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, minChunk<<c)
}

// ReleaseChunks returns chunks from [Reader.ReadAllChunks] to their pools.
// The caller must not use them afterwards. Slices of other origins are
// ignored.
func ReleaseChunks(chunks [][]byte) {
	for _, ch := range chunks {
		c := cap(ch)
		if c < minChunk || c > maxChunk || c&(c-1) != 0 {
			continue
		}
		class := 0
		for minChunk<<class < c {
			class++
		}
		ch = ch[:0]
		chunkPools[class].Put(&ch)
	}
}

// ReadAllChunks reads the rest of d to its verified end and returns the
// decoded bytes as consecutive chunks, or an error and no bytes. It avoids
// the copying of a growing buffer: chunks of 512 B to 64 KiB come from
// pools and are filled once; their capacity exceeds what remains of the
// decoded limit by less than one chunk. Give them back with
// [ReleaseChunks] when done. It returns the decoders to their pools and
// does not close the source.
func (d *Reader) ReadAllChunks() ([][]byte, error) {
	defer d.releaseDecoders()
	remaining := d.b.MaxDecodedBytes - d.top.out
	size := int64(minChunk)
	if d.sizeHint > 0 {
		size = min(d.sizeHint, remaining, maxChunk)
	}
	var chunks [][]byte
	var probe [minChunk]byte
	for {
		// Before allocating a chunk, look for the end with a small read,
		// so that a body that ends at a chunk boundary costs no empty chunk.
		p := clip(probe[:], remaining)
		n, err := d.Read(p)
		if int64(n) > remaining {
			return nil, io.ErrNoProgress // unreachable: the Reader stops at the limit
		}
		if err == io.EOF {
			if n > 0 {
				buf := getChunk(int64(n))
				copy(buf, p[:n])
				chunks = append(chunks, buf)
			}
			return chunks, nil
		}
		if err != nil {
			ReleaseChunks(chunks)
			return nil, err
		}
		buf := getChunk(min(max(size, int64(n)), remaining))
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
			ReleaseChunks(chunks)
			return nil, err
		}
	}
}

// SetSizeHint tells [Reader.ReadAll] and [Reader.ReadAllChunks] how many
// decoded bytes to expect, for example the Content-Length of an identity
// body. It sizes the first chunk only, capped by what remains of the decoded
// limit and by the largest chunk: a wrong hint costs memory within the
// limit, never correctness.
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
