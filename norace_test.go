//go:build !race

package boundhttp_test

const raceEnabled = false
