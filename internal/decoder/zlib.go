package decoder

import (
	"bufio"
	"io"
	"sync"

	"github.com/klauspost/compress/zlib"
)

var zlibPool sync.Pool // of io.ReadCloser implementing zlib.Resetter

// zlibCodec decodes the HTTP "deflate" coding: the zlib format.
type zlibCodec struct {
	d    *Reader
	src  io.Reader
	br   *bufio.Reader
	zr   io.ReadCloser
	done bool
}

func newZlib(src io.Reader, d *Reader) *zlibCodec { return &zlibCodec{d: d, src: src} }

func (z *zlibCodec) Read(p []byte) (int, error) {
	if z.done {
		return 0, io.EOF
	}
	if z.br == nil {
		z.br = getBuf(z.src)
		if end, err := atEnd(z.br); end || err != nil {
			z.done = end
			if end {
				return 0, io.EOF
			}
			return 0, err
		}
		// The first byte came: the decoder's state is taken, and charged.
		if err := z.d.chargeDecoder(FlateState, "deflate", false); err != nil {
			return 0, err
		}
		var err error
		if zr, ok := zlibPool.Get().(io.ReadCloser); ok {
			z.zr = zr
			err = zr.(zlib.Resetter).Reset(z.br, nil)
		} else {
			z.zr, err = zlib.NewReader(z.br)
		}
		if err != nil {
			return 0, err
		}
	}
	n, err := z.zr.Read(p)
	if err != io.EOF {
		return n, err
	}
	// Adler-32 verified; nothing may follow.
	end, err := atEnd(z.br)
	if err != nil {
		return n, err
	}
	if !end {
		return n, errTrailingBytes
	}
	z.done = true
	return n, io.EOF
}

func (z *zlibCodec) release() {
	if z.zr != nil {
		zlibPool.Put(z.zr)
		z.zr = nil
	}
	if z.br != nil {
		putBuf(z.br)
		z.br = nil
	}
}
