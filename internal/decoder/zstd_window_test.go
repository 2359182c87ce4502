package decoder

import (
	"bytes"
	"math"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestZstdHugeMaxWindowIsNotAVerdict pins issue 8 item 3: a MaxWindowBytes
// above what the zstd decoder's WithDecoderMaxWindow accepts (~3.75 TB) made
// every valid zstd body fail as integrity. A configuration value is never a
// verdict on a valid body: the decoder's cap is clamped.
func TestZstdHugeMaxWindowIsNotAVerdict(t *testing.T) {
	t.Parallel()
	data := text(100 << 10)
	body := encode(t, "zstd", data)
	for _, w := range []int64{1, 1 << 10, 8 << 20, zstdMaxDecoderWindow - 1, zstdMaxDecoderWindow,
		zstdMaxDecoderWindow + 1, 1 << 50, math.MaxInt64 - 1, math.MaxInt64} {
		b := limits.Budget{MaxWindowBytes: w}
		got, err := decodeAll(t, body, "zstd", b)
		if w < 128<<10 {
			// The body's own window is larger: a window verdict, never integrity.
			if stageOf(err) != "window" {
				t.Errorf("MaxWindowBytes %d: ReadAll = %v, want stage window", w, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("MaxWindowBytes %d: ReadAll = %d bytes, %v, want the body", w, len(got), err)
		}
	}
}
