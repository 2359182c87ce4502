package decoder

import "testing"

// FuzzBrotliWindowBits: the window a brotli stream's first bytes declare is
// read from at most two bytes, is within what the format can say (10 to 24
// bits, large windows up to 63), and its charge never overflows.
func FuzzBrotliWindowBits(f *testing.F) {
	for _, s := range [][]byte{{}, {0}, {1}, {0xCF, 0xFF}, {0x11, 0x1e}, {0x11}, {0x91}, {0x81}, {0x0b}} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, hdr []byte) {
		bits, ok := brotliWindowBits(hdr)
		if !ok {
			if len(hdr) >= 2 {
				t.Fatalf("%x: not told from two bytes", hdr)
			}
			return
		}
		if bits < 10 || bits > 63 {
			t.Fatalf("%x: %d window bits", hdr, bits)
		}
		if c := brotliCharge(bits); c < BrotliState {
			t.Fatalf("%x: charge %d for %d bits", hdr, c, bits)
		}
		if b2, ok2 := brotliWindowBits(append(hdr[:len(hdr):len(hdr)], 0xff, 0xff)); !ok2 || b2 != bits {
			t.Fatalf("%x: more bytes change the window: %d, %d", hdr, bits, b2)
		}
	})
}

// TestBrotliInvalidLargeWindowChargedAsLargestStandard pins what
// FuzzBrotliWindowBits found: a large-window header (RFC 9841) whose 6
// bits of WBITS say less than 10 is invalid, and was charged as a window
// of 2 bytes to 512 bytes; like every invalid code it is charged as the
// largest standard window (the decoder rejects it).
func TestBrotliInvalidLargeWindowChargedAsLargestStandard(t *testing.T) {
	for w := byte(0); w < 10; w++ {
		if bits, ok := brotliWindowBits([]byte{0x11, 0x40 | w}); !ok || bits != 24 {
			t.Errorf("large-window header with WBITS %d: %d bits, %v; want 24", w, bits, ok)
		}
	}
	if bits, _ := brotliWindowBits([]byte{0x11, 30}); bits != 30 {
		t.Errorf("large-window header with WBITS 30: %d bits", bits)
	}
}
