package decoder

import (
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdPool holds synchronous decoders (no goroutines, low memory). The frame
// inspector enforces the budget's window; the decoder's own cap is a second
// guard set per body.
var zstdPool = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecodeBuffersBelow(0))
	if err != nil {
		panic(err)
	}
	return d
}}

// zstdMaxDecoderWindow is the largest cap zstd.WithDecoderMaxWindow
// accepts: (1<<41) + 7*(1<<38), about 3.75 TB, the largest window a frame
// header can declare.
const zstdMaxDecoderWindow = 1<<41 + 7<<38

type zstdCodec struct {
	d    *Reader
	src  io.Reader
	in   frameInspector
	zr   *zstd.Decoder
	done bool
}

func newZstd(src io.Reader, d *Reader) *zstdCodec {
	c := &zstdCodec{d: d, src: src}
	c.in = frameInspector{d: d, src: src, maxFrames: d.cfg.maxMembers,
		maxWindow: d.b.MaxWindowBytes, maxContent: d.b.MaxDecodedBytes,
		requireChecksum: d.cfg.requireChecksum}
	return c
}

func (c *zstdCodec) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.zr == nil {
		c.zr = zstdPool.Get().(*zstd.Decoder)
		// The decoder refuses a cap outside [MinWindowSize,
		// zstdMaxDecoderWindow]; a budget beyond it is clamped, never turned
		// into a verdict on a valid body (no such window could be allocated
		// anyway, and the frame inspector has checked the budget's value).
		window := min(max(uint64(c.d.b.MaxWindowBytes), zstd.MinWindowSize), zstdMaxDecoderWindow)
		if err := c.zr.ResetWithOptions(&c.in, zstd.WithDecoderMaxWindow(window)); err != nil {
			return 0, err
		}
	}
	n, err := c.zr.Read(p)
	if err == io.EOF {
		// The decoder verified each frame's checksum; the inspector checks
		// that the input ended between frames.
		if ierr := c.in.finish(); ierr != nil {
			return n, ierr
		}
		c.done = true
	}
	return n, err
}

func (c *zstdCodec) release() {
	if c.zr != nil {
		c.zr.Reset(nil)
		zstdPool.Put(c.zr)
		c.zr = nil
	}
}
