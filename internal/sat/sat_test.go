package sat

import (
	"math"
	"testing"
)

// TestAddSaturatesAtMaxInt64 pins the trap of limit+1 wrapping to a
// negative count that then passes every comparison with a limit.
func TestAddSaturatesAtMaxInt64(t *testing.T) {
	tests := []struct{ a, b, want int64 }{
		{0, 0, 0},
		{-1, 1, 0},
		{1, 2, 3},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{math.MaxInt64, 0, math.MaxInt64},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 5, 10, math.MaxInt64},
		{1, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := Add(tt.a, tt.b); got != tt.want {
			t.Errorf("Add(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
