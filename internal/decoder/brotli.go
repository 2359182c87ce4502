package decoder

import (
	"bufio"
	"io"
	"sync"

	"github.com/andybalholm/brotli"

	"github.com/boundhttp/boundhttp/limits"
)

// standardBrotliWindow is the largest window of a standard brotli stream
// (WBITS 24); such windows are always accepted.
const standardBrotliWindow = 1 << 24

var brotliPool sync.Pool // of *brotli.Reader without large windows

type brotliCodec struct {
	d     *Reader
	src   io.Reader
	br    *bufio.Reader
	zr    *brotli.Reader
	large bool
	big   bool // a window too big to keep pooled; see brotliheader.go
}

func newBrotli(src io.Reader, d *Reader) *brotliCodec { return &brotliCodec{d: d, src: src} }

func (c *brotliCodec) Read(p []byte) (int, error) {
	if c.zr == nil {
		c.br = getBuf(c.src)
		hdr, err := c.br.Peek(2)
		if len(hdr) == 0 {
			if err == io.EOF {
				return 0, io.EOF // an empty body
			}
			return 0, err
		}
		if c.d.cfg.requireChecksum {
			return 0, errNoChecksum // brotli has no checksum
		}
		if err := c.charge(hdr, err); err != nil {
			return 0, err
		}
		if wbits, ok := largeWindowBits(hdr); ok {
			window := int64(1) << wbits
			if window > max(c.d.b.MaxWindowBytes, standardBrotliWindow) {
				c.d.fail(&limits.Error{Stage: limits.StageWindow, Limit: c.d.b.MaxWindowBytes,
					Observed: window, Declared: true, Encoding: "br"})
				return 0, c.d.fault
			}
			c.large = true
			c.zr = brotli.NewReaderOptions(c.br, brotli.ReaderOptions{LargeWindow: true})
		} else {
			c.zr, _ = brotliPool.Get().(*brotli.Reader)
			if c.zr == nil {
				c.zr = brotli.NewReader(c.br)
			} else {
				c.zr.Reset(c.br)
			}
		}
	}
	// The brotli Reader returns io.EOF only after the last meta-block and an
	// end of input with no bytes left over.
	return c.zr.Read(p)
}

// largeWindowBits returns the window bits of a large-window brotli stream
// (RFC 9841: the 7-bit code 0010001, a reserved zero bit, then 6 bits of
// WBITS), and whether hdr starts such a stream.
func largeWindowBits(hdr []byte) (uint, bool) {
	if hdr[0]&0x7f != 0x11 {
		return 0, false
	}
	if len(hdr) < 2 {
		// Truncated; the decoder reports it.
		return 0, false
	}
	return uint(hdr[1] & 0x3f), true
}

func (c *brotliCodec) release() {
	if c.zr != nil {
		if !c.large && !c.big {
			c.zr.Reset(nil)
			brotliPool.Put(c.zr)
		}
		c.zr = nil
	}
	if c.br != nil {
		putBuf(c.br)
		c.br = nil
	}
}
