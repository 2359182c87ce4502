package decoder

import (
	"bufio"
	"errors"
	"io"
	"sync"
)

// newCodec returns a decoder of layer l's coding reading its source. It
// reads nothing.
func newCodec(l *layer, d *Reader) (codec, error) {
	name, src := l.name, l.src
	switch name {
	case "identity":
		if d.cfg.requireChecksum {
			return &unverifiable{src: src}, nil
		}
		l.ident = identity{src}
		return &l.ident, nil
	case "gzip":
		l.gz = gzipCodec{d: d, src: src, maxMembers: d.cfg.maxMembers}
		return &l.gz, nil
	case "deflate":
		return newZlib(src, d), nil
	case "br":
		return newBrotli(src, d), nil
	case "zstd":
		return newZstd(src, d), nil
	}
	// NewReader rejects unknown codings before a layer is built.
	panic("decoding: no codec for " + name)
}

type identity struct{ io.Reader }

func (identity) release() {}

// errNoChecksum rejects a coding that cannot verify its content, under
// [WithRequireChecksum].
var errNoChecksum = errors.New("decoding: no checksum (a checksummed coding is required)")

// unverifiable is identity under [WithRequireChecksum]: an empty body passes,
// any byte is refused.
type unverifiable struct{ src io.Reader }

func (u *unverifiable) Read(p []byte) (int, error) {
	var one [1]byte
	n, err := u.src.Read(one[:])
	if n > 0 {
		return 0, errNoChecksum
	}
	return 0, err
}

func (*unverifiable) release() {}

// bufPool holds the bufio.Readers that give gzip and zlib the io.ByteReader
// they want and let a codec look for bytes after the end of its stream.
var bufPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}

func getBuf(src io.Reader) *bufio.Reader {
	br := bufPool.Get().(*bufio.Reader)
	br.Reset(src)
	return br
}

func putBuf(br *bufio.Reader) {
	br.Reset(nil)
	bufPool.Put(br)
}

// atEnd reports whether br has no bytes left, reading at most one byte.
func atEnd(br *bufio.Reader) (bool, error) {
	_, err := br.Peek(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}
