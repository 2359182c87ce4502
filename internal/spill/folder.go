package spill

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrNotPrivate is matched (errors.Is) by the error of a folder refused
// because another user could change what is in it.
var ErrNotPrivate = errors.New("spill folder is not private to this user")

// A Folder is where spilled files go. It is a value; Write is safe for
// concurrent use, and the writes of one process to one folder (by its
// path, symlinks resolved) are serialised whatever Folder values make them,
// so that MaxBytes holds across every writer of the process (several
// sessions' clients sharing a SpillDir). Writers in other processes are not
// seen: two may each find room and together pass MaxBytes until the next
// write.
type Folder struct {
	// Dir is the folder's path, made absolute by Write.
	Dir string
	// MaxBytes bounds the bytes of the spilled files (those Owns accepts)
	// in Dir, the new one included; it must be positive.
	MaxBytes int64
	// Owns reports whether a file name is one that this writer gives its
	// files: only those are counted and removed to make room, never a
	// user's other files.
	Owns func(name string) bool
}

// Write writes data to a new file (mode 0600) named prefix, decimal
// digits and suffix in the folder, after checking that the folder is
// private (creating it, mode 0700, if missing) and removing the oldest of
// its owned files until the new one fits in MaxBytes. It returns the
// file's absolute path. A file partly written is removed.
func (f Folder) Write(prefix, suffix string, data []byte) (string, error) {
	size := int64(len(data))
	if size > f.MaxBytes {
		return "", fmt.Errorf("%d bytes, more than the spill folder may hold (%d bytes)", size, f.MaxBytes)
	}
	dir, err := filepath.Abs(f.Dir)
	if err != nil {
		return "", err
	}
	root, err := OpenPrivate(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	defer lockFolder(dir)()
	if err := f.makeRoom(root, size); err != nil {
		return "", err
	}
	for range 16 { // a name taken meanwhile: another draw (bounded)
		name := prefix + strconv.FormatUint(randUint(), 10) + suffix
		file, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = file.Write(data)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			root.Remove(name)
			return "", err
		}
		return filepath.Join(dir, name), nil
	}
	return "", fmt.Errorf("no free file name in %s", dir)
}

// randUint returns a random number for a file name.
func randUint() uint64 {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return binary.LittleEndian.Uint64(b[:]) >> 1
}

// OpenPrivate opens dir, creating it (mode 0700, parents as needed) if
// missing, after checking that it is a directory, not a symbolic link,
// owned by the effective user, that neither group nor others may write to
// (0755, what mkdir makes under the usual umask, is accepted: others may
// list the names, never read a file, which Write creates with mode 0600);
// the folder opened is checked to be the one inspected. A refusal matches
// ErrNotPrivate and says why.
func OpenPrivate(dir string) (*os.Root, error) {
	if err := trustedPath(dir, filepath.Dir(dir), 0); err != nil {
		return nil, err
	}
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		// Folders made meanwhile by another user (in a sticky folder) are
		// refused here.
		if err := trustedPath(dir, filepath.Dir(dir), 0); err != nil {
			return nil, err
		}
		info, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, err
	}
	if err := private(dir, info); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	opened, err := root.Stat(".")
	if err != nil || !os.SameFile(info, opened) {
		root.Close()
		return nil, fmt.Errorf("%w: it changed while it was opened: %s", ErrNotPrivate, dir)
	}
	return root, nil
}

// trustedPath checks each existing entry from p (an absolute path above
// dir) up to the root with checkAncestor: a folder of this user's alone
// does not help if another user can rename it away (and put theirs, with
// files of the same names, in its place) or point a symbolic link on its
// path elsewhere. A symbolic link owned by root or this user (macOS's /var
// and /tmp) is followed: the path it points to is checked the same way.
// Missing entries are skipped (MkdirAll makes them, mode 0700). depth
// bounds the links followed; the walk up ends at the root.
func trustedPath(dir, p string, depth int) error {
	if depth > 8 {
		return fmt.Errorf("%w: too many symbolic links on its path: %s", ErrNotPrivate, dir)
	}
	for {
		info, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			if err := checkAncestor(dir, p, info); err != nil {
				return err
			}
			if info.Mode()&fs.ModeSymlink != 0 {
				target, err := filepath.EvalSymlinks(p)
				if err != nil {
					return err
				}
				if err := trustedPath(dir, target, depth+1); err != nil {
					return err
				}
			}
		}
		up := filepath.Dir(p)
		if up == p {
			return nil
		}
		p = up
	}
}

// private checks what Lstat said of dir.
func private(dir string, info fs.FileInfo) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%w: it is a symbolic link (another user could point it elsewhere; give the folder itself): %s", ErrNotPrivate, dir)
	case !info.IsDir():
		return fmt.Errorf("spill folder is not a directory: %s", dir)
	}
	if err := checkOwner(dir, info); err != nil {
		return err
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: mode %v lets other users write in it, so they could remove or replace its files (chmod go-w): %s", ErrNotPrivate, info.Mode().Perm(), dir)
	}
	return nil
}

// makeRoom removes the oldest owned files until size more bytes fit.
func (f Folder) makeRoom(root *os.Root, size int64) error {
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return err
	}
	type file struct {
		name      string
		size, mod int64
	}
	var files []file
	var sum int64
	for _, e := range entries {
		if !e.Type().IsRegular() || !f.Owns(e.Name()) {
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
	for _, fl := range files { // bounded by the entries read
		if sum <= f.MaxBytes-size {
			return nil
		}
		if err := root.Remove(fl.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		sum -= fl.size
	}
	if sum > f.MaxBytes-size {
		return fmt.Errorf("spill folder %s is full", f.Dir)
	}
	return nil
}

// folderLocks serialises the writes of the process to each folder, by its
// path with symlinks resolved: one mutex per folder ever written to (a
// process writes to the few its configuration names).
var folderLocks sync.Map // string -> *sync.Mutex

// lockFolder locks the folder dir (an absolute path) for this process and
// returns the unlock.
func lockFolder(dir string) (unlock func()) {
	key := dir
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		key = p
	}
	m, _ := folderLocks.LoadOrStore(key, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
