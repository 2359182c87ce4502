//go:build !race

package schema

// raceEnabled reports whether the race detector is on: time guards widen.
const raceEnabled = false
