//go:build !race

package decoding

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
