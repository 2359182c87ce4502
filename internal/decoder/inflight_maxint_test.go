package decoder

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestInFlightMaxIntBudget: a whole-body read under a budget whose decoded
// limit is near MaxInt64 (the "no practical limit" a caller may write)
// still charges its body and its decoders: a body larger than Cap is
// refused, a decoder larger than Cap fails at once.
func TestInFlightMaxIntBudget(t *testing.T) {
	t.Parallel()
	data := text(4 << 20)
	for _, max := range []int64{math.MaxInt64, math.MaxInt64 - 1000, math.MaxInt64 - 64<<10} {
		b := limits.Budget{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: max}
		for _, c := range []string{"identity", "gzip"} {
			f := limits.NewInFlight(1 << 20)
			got, err := ReadAll(bytes.NewReader(layered(t, data, splitCodings(c)...)), c, b, WithInFlight(f))
			var e *limits.Error
			if !errors.As(err, &e) || e.Stage != limits.StageInFlight {
				t.Errorf("max %d, %s: ReadAll(4 MiB, 1 MiB in flight) = %d bytes, %v, want an inflight error", max, c, len(got), err)
			}
			if f.InUse() != 0 || f.Peak() > f.Cap() {
				t.Errorf("max %d, %s: InUse() = %d, Peak() = %d, want 0 and within %d", max, c, f.InUse(), f.Peak(), f.Cap())
			}
			tiny := limits.NewInFlight(32 << 10) // below FlateState
			_, err = ReadAll(bytes.NewReader(layered(t, data, "gzip")), "gzip", b, WithInFlight(tiny))
			if !errors.As(err, &e) || e.Stage != limits.StageInFlight || e.Observed <= e.Limit {
				t.Errorf("max %d: gzip through a budget below its state = %v, want an inflight error that could never fit", max, err)
			}
		}
	}
}
