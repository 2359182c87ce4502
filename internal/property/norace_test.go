//go:build !race

package property

const raceEnabled = false
