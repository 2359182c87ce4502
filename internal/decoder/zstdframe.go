package decoder

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/boundhttp/boundhttp/limits"
)

// frameInspector walks the zstd frame structure (RFC 8878 section 3.1) of
// the bytes on their way to the decoder, without decoding them. It rejects a
// declared window above maxWindow and declared content sizes whose sum
// exceeds maxContent before the decoder can allocate for them, and counts
// frames, skippable ones included.
type frameInspector struct {
	d          *Reader
	src        io.Reader
	maxFrames  int
	maxWindow  int64
	maxContent int64
	// requireChecksum rejects a frame without the content checksum flag.
	requireChecksum bool

	state     inspectState
	hdr       [18]byte // the part of a header collected so far
	have      int      // bytes in hdr
	need      int      // bytes the current header part needs
	skip      uint64   // bytes of block data or skippable payload left
	checksum  bool     // the current frame ends with a 4-byte checksum
	last      bool     // the current block is the frame's last
	skippable bool     // skipping a skippable frame's payload
	frames    int
	content   uint64     // sum of declared content sizes
	charged   zstdCharge // what this layer's decoder has been charged
	err       error
}

type inspectState uint8

const (
	stMagic       inspectState = iota // collecting a 4-byte magic number
	stDescriptor                      // collecting the frame header descriptor and its fields
	stSkipSize                        // collecting a skippable frame's 4-byte size
	stBlockHeader                     // collecting a 3-byte block header
	stSkip                            // skipping block data or a skippable payload
	stChecksum                        // skipping the 4-byte content checksum
)

const (
	zstdMagic         = 0xFD2FB528
	zstdSkippableMask = 0xFFFFFFF0
	zstdSkippable     = 0x184D2A50
)

var (
	errZstdMagic     = errors.New("decoding: not a zstd frame")
	errZstdTruncated = errors.New("decoding: zstd stream ends inside a frame")
	errZstdReserved  = errors.New("decoding: zstd reserved bit or block type set")
	// errZstdNoChecksum rejects a frame without a content checksum under
	// [WithRequireChecksum].
	errZstdNoChecksum = errors.New("decoding: zstd frame without content checksum (a checksum is required)")
)

func (f *frameInspector) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.src.Read(p)
	if perr := f.walk(p[:n]); perr != nil {
		f.err = perr
		return 0, perr
	}
	return n, err
}

// finish reports whether the input ended cleanly between frames.
func (f *frameInspector) finish() error {
	if f.err != nil {
		return f.err
	}
	if f.state != stMagic || f.have != 0 {
		return errZstdTruncated
	}
	return nil
}

func (f *frameInspector) walk(b []byte) error {
	for len(b) > 0 {
		if f.state == stSkip || f.state == stChecksum {
			k := uint64(len(b))
			if k > f.skip {
				k = f.skip
			}
			f.skip -= k
			b = b[k:]
			if f.skip == 0 {
				f.endSkip()
			}
			continue
		}
		if f.need == 0 {
			f.need = f.partSize()
		}
		k := copy(f.hdr[f.have:f.need], b)
		f.have += k
		b = b[k:]
		if f.have < f.need {
			return nil
		}
		if err := f.part(); err != nil {
			return err
		}
	}
	return nil
}

// partSize is the size of the header part the state collects first.
func (f *frameInspector) partSize() int {
	switch f.state {
	case stMagic, stSkipSize:
		return 4
	case stDescriptor:
		return 1
	case stBlockHeader:
		return 3
	}
	return 0
}

// part handles a completely collected header part.
func (f *frameInspector) part() error {
	switch f.state {
	case stMagic:
		m := binary.LittleEndian.Uint32(f.hdr[:4])
		f.frames++
		if f.frames > f.maxFrames {
			if f.maxFrames == 1 {
				return errExtraFrame
			}
			return errTooManyFrames
		}
		switch {
		case m == zstdMagic:
			f.to(stDescriptor)
		case m&zstdSkippableMask == zstdSkippable:
			f.to(stSkipSize)
		default:
			return errZstdMagic
		}
	case stSkipSize:
		f.skip = uint64(binary.LittleEndian.Uint32(f.hdr[:4]))
		f.to(stSkip)
		f.skippable = true
		if f.skip == 0 {
			f.endSkip()
		}
	case stDescriptor:
		if f.need == 1 {
			// Now the descriptor says how long the rest of the header is.
			fhd := f.hdr[0]
			if fhd&0x08 != 0 {
				return errZstdReserved
			}
			single := fhd&0x20 != 0
			size := 1
			if !single {
				size++ // window descriptor
			}
			size += [4]int{0, 1, 2, 4}[fhd&3] // dictionary ID
			size += fcsSize(fhd)
			if size > 1 {
				f.need = size
				return nil
			}
		}
		return f.header()
	case stBlockHeader:
		h := uint32(f.hdr[0]) | uint32(f.hdr[1])<<8 | uint32(f.hdr[2])<<16
		f.last = h&1 != 0
		size := h >> 3
		switch (h >> 1) & 3 {
		case 1: // RLE: one byte, repeated size times
			size = 1
		case 3:
			return errZstdReserved
		}
		f.skip = uint64(size)
		f.to(stSkip)
		if f.skip == 0 {
			f.endSkip()
		}
	}
	return nil
}

// fcsSize is the size of the Frame_Content_Size field.
func fcsSize(fhd byte) int {
	switch fhd >> 6 {
	case 0:
		if fhd&0x20 != 0 {
			return 1
		}
		return 0
	case 1:
		return 2
	case 2:
		return 4
	}
	return 8
}

// header checks a complete frame header against the budget.
func (f *frameInspector) header() error {
	fhd := f.hdr[0]
	single := fhd&0x20 != 0
	f.checksum = fhd&0x04 != 0
	if f.requireChecksum && !f.checksum {
		return errZstdNoChecksum
	}
	pos := 1
	var window uint64
	if !single {
		wd := f.hdr[1]
		exp := uint(wd >> 3)
		base := uint64(1) << (10 + exp)
		window = base + (base/8)*uint64(wd&7)
		pos++
	}
	pos += [4]int{0, 1, 2, 4}[fhd&3]
	var fcs uint64
	known := true
	switch n := fcsSize(fhd); n {
	case 0:
		known = false
	case 1:
		fcs = uint64(f.hdr[pos])
	case 2:
		fcs = uint64(binary.LittleEndian.Uint16(f.hdr[pos:])) + 256
	case 4:
		fcs = uint64(binary.LittleEndian.Uint32(f.hdr[pos:]))
	case 8:
		fcs = binary.LittleEndian.Uint64(f.hdr[pos:])
	}
	if single {
		window = fcs // the whole content is the history
	}
	if known {
		f.content += fcs
		if f.content < fcs || f.content > uint64(f.maxContent) {
			f.d.fail(&limits.Error{Stage: limits.StageDecoded, Limit: f.maxContent,
				Observed: clampInt64(f.content), Declared: true, Encoding: "zstd"})
			return f.d.fault
		}
	}
	if window > uint64(f.maxWindow) {
		f.d.fail(&limits.Error{Stage: limits.StageWindow, Limit: f.maxWindow,
			Observed: clampInt64(window), Declared: true, Encoding: "zstd"})
		return f.d.fault
	}
	if err := f.d.chargeZstdWindow(&f.charged, int64(window)); err != nil {
		return err
	}
	f.to(stBlockHeader)
	return nil
}

// endSkip moves on after block data, a checksum or a skippable payload.
func (f *frameInspector) endSkip() {
	switch {
	case f.state == stChecksum, f.skippable:
		f.skippable = false
		f.to(stMagic)
	case f.last:
		f.last = false
		if f.checksum {
			f.to(stChecksum)
			f.skip = 4
		} else {
			f.to(stMagic)
		}
	default:
		f.to(stBlockHeader)
	}
}

func (f *frameInspector) to(s inspectState) {
	f.state, f.have, f.need = s, 0, 0
}

var errExtraFrame = errors.New("decoding: unexpected extra zstd frame")

func clampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}
