package decoding

import (
	"bufio"
	"io"
	"sync"
)

// newCodec returns a decoder of coding name reading src. It reads nothing.
func newCodec(name string, src io.Reader, d *Reader) (codec, error) {
	switch name {
	case "identity":
		return identity{src}, nil
	case "gzip":
		return newGzip(src, d.cfg.maxMembers), nil
	case "deflate":
		return newZlib(src), nil
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
