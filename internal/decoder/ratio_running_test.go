package decoder

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestRatioIsRunningNotOverall pins what MaxRatio's verdict is monotonic
// in. The ratio is checked on every read against the bytes decoded and
// read so far, so a body fails when its running ratio ever exceeds the
// limit: a body whose first part is a bomb fails even when its overall
// ratio is lower than that of a body that passes. The early warning is the
// point of MaxRatio, and no early check can be monotonic in the overall
// ratio. What holds is monotonicity in the limit: a body that passes a
// limit passes every higher one.
func TestRatioIsRunningNotOverall(t *testing.T) {
	t.Parallel()
	noise := make([]byte, 400<<10)
	rand.New(rand.NewSource(1)).Read(noise)
	bombFirst := append(bytes.Repeat([]byte{0}, 100<<10), noise...)              // overall ~1.25
	bombLast := append(append([]byte(nil), noise[:50<<10]...), text(200<<10)...) // overall ~3.5
	lo, hi := encode(t, "gzip", bombFirst), encode(t, "gzip", bombLast)
	if rl, rh := float64(len(bombFirst))/float64(len(lo)), float64(len(bombLast))/float64(len(hi)); rl >= rh {
		t.Fatalf("overall ratios %.2f and %.2f: the test case is wrong", rl, rh)
	}
	if _, err := decodeAll(t, lo, "gzip", limits.Budget{MaxRatio: 10}); stageOf(err) != "ratio" {
		t.Errorf("ReadAll(zeros then noise, MaxRatio 10) = %v, want stage ratio (running ratio ~25)", err)
	}
	if _, err := decodeAll(t, hi, "gzip", limits.Budget{MaxRatio: 10}); err != nil {
		t.Errorf("ReadAll(noise then text, MaxRatio 10) = %v, want nil", err)
	}
	for _, body := range [][]byte{lo, hi} {
		passed := false
		for _, r := range []float64{1, 2, 4, 8, 16, 32, 64, 1e3, 1e6} {
			_, err := decodeAll(t, body, "gzip", limits.Budget{MaxRatio: r})
			if passed && err != nil {
				t.Errorf("body of %d wire bytes passes a lower MaxRatio but fails %v: %v", len(body), r, err)
			}
			passed = passed || err == nil
		}
	}
}
