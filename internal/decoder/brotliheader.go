package decoder

// brotliWindowBits returns the window bits a brotli stream declares in its
// first bits (RFC 7932 section 9.1; large windows per RFC 9841), and whether
// hdr holds enough bytes to tell. A standard stream needs one byte; a
// large-window one two. Invalid codes are left to the decoder to reject; they
// are charged as the largest standard window.
func brotliWindowBits(hdr []byte) (uint, bool) {
	if len(hdr) == 0 {
		return 0, false
	}
	b := hdr[0]
	if b&1 == 0 {
		return 16, true // 0
	}
	if n := (b >> 1) & 7; n != 0 {
		return 17 + uint(n), true // 1xxx with xxx != 000: 18..24
	}
	switch m := (b >> 4) & 7; m {
	case 0:
		return 17, true // 1000 000
	case 1:
		// 1000 100: a large window (RFC 9841) if the next bit is zero, then 6
		// bits of WBITS; otherwise invalid (the decoder rejects it).
		if b&0x80 != 0 {
			return 24, true
		}
		if len(hdr) < 2 {
			return 0, false
		}
		if w := uint(hdr[1] & 0x3f); w >= 10 {
			return w, true
		}
		return 24, true // below the smallest window: invalid, charged as the largest standard one
	default:
		return 8 + uint(m), true // 1000 xxx: 10..15
	}
}

// brotliCharge is what a brotli stream with window bits wbits is charged:
// its ring buffers at most and the rest of the decoder's state. The decoder
// grows its ring buffer in doublings up to 1<<wbits as meta-blocks need
// more, copying the old one into the new: during the last copy the buffers
// of half the window and of the window are both live, 1.5 times the window
// (plus the decoder's 42 bytes of slack each, which BrotliState covers).
func brotliCharge(wbits uint) int64 {
	if wbits > 61 {
		wbits = 61
	}
	ring := int64(1) << wbits
	return ring + ring/2 + BrotliState
}

// charge charges the stream's window and decoder state before the decoder
// exists; hdr holds the first bytes peeked (readErr the error of the peek).
// A window above the budget's is left to the window check that follows.
func (c *brotliCodec) charge(hdr []byte, readErr error) error {
	if c.d.fl.hold.Pool() == nil {
		return nil
	}
	wbits, ok := brotliWindowBits(hdr)
	if !ok {
		if readErr != nil {
			return nil // truncated: the decoder reports it
		}
		wbits = 24
	}
	if wbits > 24 && int64(1)<<min(wbits, 62) > max(c.d.b.MaxWindowBytes, standardBrotliWindow) {
		return nil // refused by the window check
	}
	// A ring buffer kept in the pool would be memory no body is charged
	// for: above maxPooledBrotliBits the reader is dropped after use.
	c.big = wbits > maxPooledBrotliBits
	return c.d.chargeDecoder(brotliCharge(wbits), "br", true)
}

// maxPooledBrotliBits is the largest window (1 MiB) whose brotli readers
// return to the pool when an InFlight budget is charged.
const maxPooledBrotliBits = 20
