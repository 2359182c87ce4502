//go:build race

package boundhttp_test

// raceEnabled reports whether the race detector is on: the heaviest
// in-flight tests then run at a smaller scale with the same ratios.
const raceEnabled = true
