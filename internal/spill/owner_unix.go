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

// checkAncestor refuses an entry on the way to the folder (a directory
// above it, or a symbolic link among them) that another user could change:
// one owned by a user other than this one or root, and a directory that
// others may write to without the sticky bit (they could rename the
// folder away and put theirs in its place).
func checkAncestor(dir, p string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w: the owner of %s is unknown: %s", ErrNotPrivate, p, dir)
	}
	if uid := os.Geteuid(); st.Uid != 0 && int(st.Uid) != uid {
		return fmt.Errorf("%w: %s, on its path, is owned by uid %d, who could move the folder away and put theirs in its place: %s",
			ErrNotPrivate, p, st.Uid, dir)
	}
	if info.IsDir() && info.Mode().Perm()&0o022 != 0 && info.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("%w: %s, on its path, may be written by other users (mode %v, no sticky bit), who could move the folder away and put theirs in its place: %s",
			ErrNotPrivate, p, info.Mode().Perm(), dir)
	}
	return nil
}
