//go:build race

package decoder

// raceEnabled reports whether the race detector is on. Under it sync.Pool
// drops objects at random, so tests that count allocations of pooled state
// skip.
const raceEnabled = true
