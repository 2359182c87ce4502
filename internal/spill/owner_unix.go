//go:build unix

package spill

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a folder another user owns.
func checkOwner(dir string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: its owner is unknown: %s", ErrNotPrivate, dir)
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("%w: it is owned by uid %d, not by this user (uid %d): %s", ErrNotPrivate, st.Uid, uid, dir)
	}
	return nil
}
