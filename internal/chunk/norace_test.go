//go:build !race

package chunk

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
