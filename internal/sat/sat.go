// Package sat is the one owner of saturating arithmetic on byte counts and
// limits: limit+1, written+len(p) and held+n overflow at math.MaxInt64, and
// a wrapped count would pass a limit it broke.
package sat

import "math"

// Add returns a+b for b >= 0, saturated at math.MaxInt64.
func Add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
