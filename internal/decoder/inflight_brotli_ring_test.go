package decoder

import (
	"bytes"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
)

// TestInFlightBrotliRingBufferGrowth: the brotli decoder does not allocate
// its ring buffer at the declared window at once: it starts small and
// doubles it as meta-blocks need more (andybalholm/brotli
// calculateRingBufferSize, "canny" allocation), copying the old ring buffer
// into the new one (ensureRingBuffer). While the last copy runs, the
// buffers of window/2 and window are both live: 1.5 times the window, where
// the body was charged the window once. With a 16 MiB window that is 8 MiB
// no body was charged, more than BrotliState's slack over its worst-case
// Huffman tables.
//
// The test measures that the chain happens (with the collector off, the
// decoder allocates at least 1.5 times the window for a body that fills
// it, where a single allocation would be the window plus tables) and
// checks that the charge covers both buffers of the last step, plus the
// worst-case tables of TestDecoderStateCharges.
func TestInFlightBrotliRingBufferGrowth(t *testing.T) {
	const lgwin = 22
	const window = 1 << lgwin
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 1, LGWin: lgwin})
	w.Write(text(window))
	w.Close()
	body := buf.Bytes()
	if bits, ok := brotliWindowBits(body); !ok || bits != lgwin {
		t.Fatalf("stream declares window bits %d, %v, want %d", bits, ok, lgwin)
	}
	got := allocated(func() {
		n, err := io.Copy(io.Discard, brotli.NewReader(bytes.NewReader(body)))
		if err != nil || n != window {
			t.Errorf("decoded %d bytes, %v", n, err)
		}
	})
	t.Logf("decoder allocated %d bytes for a %d-byte window", got, window)
	if got < window+window/2 {
		t.Fatalf("decoder allocated %d bytes, want at least 1.5 times the %d-byte window (the ring buffer grows in steps)", got, window)
	}
	const tables = 4 * 256 * (630 + 1080 + 1528)
	const slack = 42 // kRingBufferWriteAheadSlack, per ring buffer
	for bits := uint(10); bits <= 30; bits++ {
		ring := int64(1) << bits
		if need := ring + ring/2 + 2*slack + tables; brotliCharge(bits) < need {
			t.Errorf("brotliCharge(%d) = %d, want at least %d: both ring buffers of the last growth step (%d and %d bytes) and the tables", bits, brotliCharge(bits), need, ring/2, ring)
		}
	}
}
