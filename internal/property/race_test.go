//go:build race

package property

// raceEnabled: the race detector slows the exchanges about twentyfold, so
// the fixed sample is smaller under it.
const raceEnabled = true
