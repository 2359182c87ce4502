package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

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

// makeRoom removes the oldest spilled files in dir (regular files named
// as fetch names them, fetch-<digits>.txt or .bin) until size more bytes fit in maxBytes of them. A body larger
// than maxBytes is an error. Other files are neither counted nor touched. Runs
// of fetch at the same moment may each find room and together pass maxBytes
// until the next run; the bound is best effort across processes.
func makeRoom(dir string, size, maxBytes int64) error {
	if size > maxBytes {
		return fmt.Errorf("the body is %d bytes, more than the spill folder may hold (%d bytes)", size, maxBytes)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type file struct {
		name string
		size int64
		mod  int64
	}
	var files []file
	var sum int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !isSpillName(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, file{e.Name(), info.Size(), info.ModTime().UnixNano()})
		sum += info.Size()
	}
	slices.SortFunc(files, func(a, b file) int {
		return cmp.Or(cmp.Compare(a.mod, b.mod), strings.Compare(a.name, b.name))
	})
	for _, f := range files { // bounded by the entries read
		if sum <= maxBytes-size {
			return nil
		}
		if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !os.IsNotExist(err) {
			return err
		}
		sum -= f.size
	}
	return nil
}
