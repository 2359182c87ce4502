package main

import "strings"

// defaultSpillMaxBytes is the -spill-max-bytes default, the same as
// mcpbound.DefaultMaxSpillBytes: 256 MiB.
const defaultSpillMaxBytes = 256 << 20

// spillPrefix begins the name of every file fetch spills; only such files
// are ever removed to make room.
const spillPrefix = "fetch-"

// isSpillName reports whether name is one os.CreateTemp gives a spilled
// file: spillPrefix, decimal digits, then .txt or .bin. A user's file that
// merely begins with spillPrefix is not fetch's to remove.
func isSpillName(name string) bool {
	rest, ok := strings.CutPrefix(name, spillPrefix)
	if !ok {
		return false
	}
	digits, ok := strings.CutSuffix(rest, ".txt")
	if !ok {
		if digits, ok = strings.CutSuffix(rest, ".bin"); !ok {
			return false
		}
	}
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}
