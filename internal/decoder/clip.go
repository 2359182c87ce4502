package decoder

import "math"

// clip returns p cut to at most left+1 bytes: the bytes that remain under a
// limit plus the one byte that detects a breach. left >= -1. It never
// computes left+1 unless that is below len(p), so a limit of math.MaxInt64
// cannot wrap.
func clip(p []byte, left int64) []byte {
	if int64(len(p))-1 > left {
		return p[:left+1]
	}
	return p
}

// ratioLimit is [limits.Budget.MaxRatio] rounded down for
// [limits.Error.Limit], saturated at math.MaxInt64 (converting a larger
// float to int64 is undefined).
func ratioLimit(r float64) int64 {
	if r >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(r)
}
