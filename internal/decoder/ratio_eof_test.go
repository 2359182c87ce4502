package decoder

import (
	"bytes"
	"crypto/rand"
	"io"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestRatioCheckedOnLastRead pins issue 8 item 4: flate returns its last
// bytes together with io.EOF, and the ratio was checked only when err was
// nil, so 31 KiB of zeros (ratio ~480) passed MaxRatio 10 while 32 KiB
// failed. Past the grace, a body over the ratio fails whatever its size;
// within the grace it passes (documented on limits.RatioGrace).
func TestRatioCheckedOnLastRead(t *testing.T) {
	t.Parallel()
	const g = limits.RatioGrace
	for _, tt := range []struct {
		n     int
		stage string
	}{
		{g - 1, ""}, {g, ""}, {g + 1, "ratio"}, {31 << 10, "ratio"}, {32 << 10, "ratio"},
		{64 << 10, "ratio"}, {1 << 20, "ratio"},
	} {
		zeros := make([]byte, tt.n)
		for _, c := range []string{"gzip", "deflate", "br", "zstd"} {
			body := encode(t, c, zeros)
			b := limits.Budget{MaxRatio: 10}
			if _, err := decodeAll(t, body, c, b); stageOf(err) != tt.stage {
				t.Errorf("ReadAll(%d zeros, %s, MaxRatio 10) = %v, want stage %q", tt.n, c, err, tt.stage)
			}
			// Streaming with one buffer larger than the body: the last
			// bytes come with io.EOF.
			d, _ := NewReader(bytes.NewReader(body), c, b)
			buf := make([]byte, 2<<20)
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				_, err = d.Read(buf)
			}
			if err == io.EOF {
				err = nil
			}
			if stageOf(err) != tt.stage {
				t.Errorf("Read(%d zeros, %s, MaxRatio 10) = %v, want stage %q", tt.n, c, err, tt.stage)
			}
		}
	}
	// A body under the ratio passes at any size.
	random := make([]byte, 256<<10)
	rand.Read(random)
	for _, c := range []string{"gzip", "deflate", "br", "zstd"} {
		got, err := decodeAll(t, encode(t, c, random), c, limits.Budget{MaxRatio: 1.5})
		if err != nil || !bytes.Equal(got, random) {
			t.Errorf("ReadAll(random, %s, MaxRatio 1.5) = %d bytes, %v, want the body", c, len(got), err)
		}
	}
}
