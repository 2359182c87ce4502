//go:build !race

package decoder

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
