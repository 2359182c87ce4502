package decoder

import (
	"io"
	"sync"

	"github.com/boundhttp/boundhttp/internal/chunk"
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
	return chunks.Join(), nil // gives back the chunks' charge: the bytes are the caller's
}

// ReadAllChunks reads the rest of d to its verified end and returns the
// decoded bytes as consecutive pooled chunks, or an error and no bytes. It
// avoids the copying of a growing buffer: chunks of 512 B to 64 KiB are
// filled once; their capacity exceeds what remains of the decoded limit by
// less than one chunk. It returns the decoders to their pools and does not
// close the source. Give the chunks back with [chunk.List.Release].
func (d *Reader) ReadAllChunks() (chunk.List, error) {
	defer d.releaseDecoders()
	remaining := d.b.MaxDecodedBytes - d.top.out
	d.startBody(remaining)
	if d.fl.hold.Pool() != nil && d.fl.hold.Held() == 0 && d.wire.n == 0 {
		if n, ok := d.earnedAt(); ok {
			d.readAheadTo(n)
		}
	}
	size := int64(chunk.MinSize)
	if d.sizeHint > 0 {
		size = min(d.sizeHint, remaining, chunk.MaxSize)
	}
	var chunks chunk.List
	probe := probePool.Get().(*[chunk.MinSize]byte)
	defer probePool.Put(probe)
	for {
		// Before allocating a chunk, look for the end with a small read,
		// so that a body that ends at a chunk boundary costs no empty chunk.
		p := clip(probe[:], remaining)
		n, err := d.Read(p)
		if int64(n) > remaining {
			chunks.Release()
			d.dropChunks()
			return chunk.List{}, io.ErrNoProgress // unreachable: the Reader stops at the limit
		}
		if err == io.EOF {
			if n > 0 {
				if cerr := d.chargeChunk(chunk.Cap(int64(n))); cerr != nil {
					chunks.Release()
					d.dropChunks()
					return chunk.List{}, cerr
				}
				copy(chunks.Next(int64(n)), p[:n])
			}
			d.handOver(&chunks)
			return chunks, nil
		}
		if err == nil {
			err = d.chargeChunk(chunk.Cap(min(max(size, int64(n)), remaining)))
		}
		if err != nil {
			chunks.Release()
			d.dropChunks()
			return chunk.List{}, err
		}
		buf := chunks.Next(min(max(size, int64(n)), remaining))
		copy(buf, p[:n])
		m, err := d.fill(buf[n:])
		m += n
		remaining -= int64(m)
		chunks.Truncate(m)
		switch err {
		case nil:
			size = min(size*2, chunk.MaxSize)
		case io.EOF:
			d.handOver(&chunks)
			return chunks, nil
		default:
			chunks.Release()
			d.dropChunks()
			return chunk.List{}, err
		}
	}
}

// probePool holds the buffers ReadAllChunks looks for the end with. On the
// stack such a buffer would escape to the heap through the decoders' Read:
// 512 bytes allocated for every whole body.
var probePool = sync.Pool{New: func() any { return new([chunk.MinSize]byte) }}

// SetSizeHint tells [Reader.ReadAll] how many decoded bytes to expect, for
// example the Content-Length of an identity body. It sizes the first chunk
// only, capped by what remains of the decoded limit and by the largest
// chunk: a wrong hint costs memory within the limit, never correctness.
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
