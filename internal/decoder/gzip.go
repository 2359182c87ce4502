package decoder

import (
	"bufio"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
)

var (
	errExtraMember   = errors.New("decoding: unexpected extra gzip member")
	errTrailingBytes = errors.New("decoding: trailing bytes after end of stream")
	errTooManyFrames = errors.New("decoding: more members or frames than allowed")
)

var gzipPool sync.Pool // of *gzip.Reader

type gzipCodec struct {
	d          *Reader
	src        io.Reader
	br         *bufio.Reader
	zr         *gzip.Reader
	members    int // members started
	maxMembers int
	done       bool
}

func (g *gzipCodec) Read(p []byte) (int, error) {
	if g.done {
		return 0, io.EOF
	}
	if g.zr == nil {
		if g.br == nil {
			g.br = getBuf(g.src)
		}
		// The decoder's state is taken, and charged, at the body's first
		// byte: a peer that sends headers alone holds none.
		if _, err := g.br.Peek(1); err != nil {
			if err == io.EOF {
				g.done = true // no bytes at all: an empty body
			}
			return 0, err
		}
		if err := g.d.chargeDecoder(FlateState, "gzip", false); err != nil {
			return 0, err
		}
		g.zr, _ = gzipPool.Get().(*gzip.Reader)
		if g.zr == nil {
			g.zr = new(gzip.Reader)
		}
		if err := g.start(); err != nil {
			if err == io.EOF {
				// No bytes at all: an empty body.
				g.done = true
			}
			return 0, err
		}
	}
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			return n, err
		}
		// This member ended with its CRC and size verified.
		end, err := atEnd(g.br)
		if err != nil {
			return n, err
		}
		if end {
			g.done = true
			return n, io.EOF
		}
		if g.maxMembers == 1 {
			if b, _ := g.br.Peek(2); len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b {
				return n, errExtraMember
			}
			return n, errTrailingBytes
		}
		if g.members >= g.maxMembers {
			return n, errTooManyFrames
		}
		if err := g.start(); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// start reads the header of the next member.
func (g *gzipCodec) start() error {
	g.members++
	err := g.zr.Reset(g.br)
	g.zr.Multistream(false)
	return err
}

func (g *gzipCodec) release() {
	if g.zr != nil {
		gzipPool.Put(g.zr)
		g.zr = nil
	}
	if g.br != nil {
		putBuf(g.br)
		g.br = nil
	}
}
