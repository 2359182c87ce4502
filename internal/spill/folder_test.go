package spill

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// owns is the Owns of these tests.
func owns(name string) bool { return strings.HasPrefix(name, "r-") }

// TestFolderRefusesWhatOthersReach: a folder given as a symbolic link (even
// to a private folder of the user's), one group or others may write to,
// and a file are refused, nothing written; a missing folder is made mode
// 0700.
// Sabotage: skipping the mode check writes into the 0777 folder.
func TestFolderRefusesWhatOthersReach(t *testing.T) {
	base := t.TempDir()
	mine := filepath.Join(base, "mine")
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(mine, link)
	for _, mode := range []os.FileMode{0o777, 0o770, 0o720, 0o702, 0o775, 0o777 | os.ModeSticky} {
		open := filepath.Join(base, "open"+mode.String())
		os.Mkdir(open, 0o700)
		os.Chmod(open, mode)
		if _, err := (Folder{Dir: open, MaxBytes: 100, Owns: owns}).Write("r-", ".txt", []byte("x")); !errors.Is(err, ErrNotPrivate) {
			t.Errorf("folder of mode %v: %v, want ErrNotPrivate", mode, err)
		}
		if entries, _ := os.ReadDir(open); len(entries) != 0 {
			t.Errorf("folder of mode %v: written to", mode)
		}
	}
	if _, err := (Folder{Dir: link, MaxBytes: 100, Owns: owns}).Write("r-", ".txt", []byte("x")); !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlinked folder: %v, want a refusal naming the link", err)
	}
	file := filepath.Join(base, "file")
	os.WriteFile(file, []byte("mine"), 0o600)
	if _, err := (Folder{Dir: file, MaxBytes: 100, Owns: owns}).Write("r-", ".txt", []byte("x")); err == nil {
		t.Error("a file taken as the folder")
	}
	fresh := filepath.Join(base, "a", "b")
	p, err := (Folder{Dir: fresh, MaxBytes: 100, Owns: owns}).Write("r-", ".txt", []byte("data"))
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(fresh)
	pfi, _ := os.Stat(p)
	if got, _ := os.ReadFile(p); string(got) != "data" || fi.Mode().Perm() != 0o700 || pfi.Mode().Perm() != 0o600 || filepath.Dir(p) != fresh {
		t.Errorf("new folder mode %v, file %s mode %v holding %q", fi.Mode().Perm(), p, pfi.Mode().Perm(), got)
	}
}

// TestFolderOrdinaryModesAccepted: a folder of the user's that nobody else
// may write to is accepted whatever it lets others read or search (0755 is
// what mkdir makes under the usual umask, and what t.TempDir makes); the
// file is mode 0600 in each. Sabotage: the old rule (no bit at all for
// group or others) refuses 0755.
func TestFolderOrdinaryModesAccepted(t *testing.T) {
	base := t.TempDir()
	for _, mode := range []os.FileMode{0o700, 0o755, 0o750, 0o711, 0o705} {
		dir := filepath.Join(base, "m"+mode.String())
		os.Mkdir(dir, 0o700)
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		p, err := (Folder{Dir: dir, MaxBytes: 100, Owns: owns}).Write("r-", ".txt", []byte("data"))
		if err != nil {
			t.Errorf("folder of mode %v: %v", mode, err)
			continue
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("folder of mode %v: file %s: %v, want mode 0600", mode, p, err)
		}
	}
}

// nobody is the uid and gid of the other local user of the takeover tests.
const nobody = 65534

// asNobody runs a shell command as uid 65534 and returns its error.
func asNobody(t *testing.T, script string) error {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("as uid %d: %s: %v %s", nobody, script, err, out)
	}
	return err
}

// TestFolderTakeoverByAnotherUser: in a shared sticky temporary folder,
// another user (uid 65534, a real process) who creates the spill folder
// first (mode 0777), or a symbolic link to a folder of theirs, gets it
// refused: nothing is written where they can read or replace it; in the
// user's own private folder they can neither replace nor remove a spilled
// file. Runs as root (CI does); skipped otherwise, except under CI.
// Sabotage: dropping the owner check writes into the other user's folder.
func TestFolderTakeoverByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs as root; this test needs root to act as a second user")
		}
		t.Skip("needs root to run a process as a second user (uid 65534)")
	}
	shared, err := os.MkdirTemp("", "spill-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil { // 0o1777 is no FileMode: os.ModeSticky is the sticky bit
		t.Fatal(err)
	}
	if err := asNobody(t, "test -w "+shared); err != nil {
		t.Fatalf("uid %d cannot write to %s (a shared temporary folder): %v", nobody, shared, err)
	}

	taken := filepath.Join(shared, "mcpbound-results")
	if err := asNobody(t, "mkdir -m 0777 "+taken); err != nil {
		t.Fatal(err)
	}
	_, err = Folder{Dir: taken, MaxBytes: 1 << 20, Owns: owns}.Write("r-", ".txt", []byte("secret"))
	if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("folder created by uid %d: %v, want a refusal naming the owner", nobody, err)
	}
	// A private folder of theirs: only the owner check keeps root out.
	closed := filepath.Join(shared, "closed")
	if err := asNobody(t, "mkdir -m 0700 "+closed); err != nil {
		t.Fatal(err)
	}
	if _, err := (Folder{Dir: closed, MaxBytes: 1 << 20, Owns: owns}).Write("r-", ".txt", []byte("secret")); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("private folder of uid %d: %v, want a refusal", nobody, err)
	}
	theirs := filepath.Join(shared, "theirs")
	linked := filepath.Join(shared, "linked")
	if err := asNobody(t, "mkdir -m 0700 "+theirs+" && ln -s "+theirs+" "+linked); err != nil {
		t.Fatal(err)
	}
	if _, err := (Folder{Dir: linked, MaxBytes: 1 << 20, Owns: owns}).Write("r-", ".txt", []byte("secret")); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("symbolic link made by uid %d: %v, want a refusal", nobody, err)
	}
	os.Chmod(theirs, 0o700) // root may look: nothing of ours is there
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Errorf("written through the other user's link: %v", entries)
	}
	if entries, _ := os.ReadDir(closed); len(entries) != 0 {
		t.Errorf("written into the other user's private folder: %v", entries)
	}
	if entries, _ := os.ReadDir(taken); len(entries) != 0 {
		t.Errorf("written into the other user's folder: %v", entries)
	}

	ours := filepath.Join(shared, "ours")
	p, err := Folder{Dir: ours, MaxBytes: 1 << 20, Owns: owns}.Write("r-", ".txt", []byte("the result"))
	if err != nil {
		t.Fatal(err)
	}
	if asNobody(t, "echo forged > "+p) == nil || asNobody(t, "rm -f "+p) == nil || asNobody(t, "echo forged > "+ours+"/r-1.txt") == nil {
		t.Errorf("uid %d wrote into the private folder", nobody)
	}
	if got, _ := os.ReadFile(p); string(got) != "the result" {
		t.Errorf("the spilled file now holds %q", got)
	}
}

// TestFolderUnderAnotherUsersFolder: a spill folder of the user's own is
// not private when another user can rename it away and put theirs, with a
// file of the same name, in its place: a folder above it that another user
// (uid 65534, a real process) owns, a symbolic link of theirs on its path,
// or a folder above it that others may write to without the sticky bit.
// Each is refused before anything is made or written; a folder in a
// sticky shared folder, and a symbolic link root made on the path (as
// macOS's /var and /tmp are), are accepted. Found: the folder was made
// inside uid 65534's folder, who then swapped it for theirs and the file
// the note named held "forged". Sabotage: skipping trustedPath -> this
// test fails (the files are written, and the swap forges one).
func TestFolderUnderAnotherUsersFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI runs as root; this test needs root to act as a second user")
		}
		t.Skip("needs root to run a process as a second user (uid 65534)")
	}
	shared, err := os.MkdirTemp("", "spill-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(shared, "theirs")
	linked := filepath.Join(shared, "linked")
	if err := asNobody(t, "mkdir -m 0755 "+theirs+" && ln -s "+theirs+" "+linked); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(shared, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	for _, dir := range []string{
		filepath.Join(theirs, "results"),
		filepath.Join(theirs, "a", "b", "results"),
		filepath.Join(linked, "results"),
		filepath.Join(open, "results"),
	} {
		p, err := Folder{Dir: dir, MaxBytes: 1 << 20, Owns: owns}.Write("r-", ".txt", []byte("the result"))
		if !errors.Is(err, ErrNotPrivate) || !strings.Contains(err.Error(), "on its path") {
			t.Errorf("%s: %v, want a refusal naming the folder on its path", dir, err)
		}
		if err == nil && asNobody(t, "mv "+dir+" "+dir+".old && mkdir -m 0700 "+dir+" && echo forged > "+p) == nil {
			got, _ := os.ReadFile(p)
			t.Errorf("%s: uid %d swapped the folder: the file named holds %q", dir, nobody, got)
		}
	}
	for _, made := range []string{filepath.Join(theirs, "results"), filepath.Join(theirs, "a"), filepath.Join(open, "results")} {
		if _, err := os.Lstat(made); err == nil {
			t.Errorf("%s was made in a folder another user controls", made)
		}
	}
	// Accepted: a folder in the sticky shared folder, and one reached
	// through a symbolic link root made to a folder of root's.
	rootLink := filepath.Join(shared, "rootlink")
	if err := os.Symlink(t.TempDir(), rootLink); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(shared, "ours"), filepath.Join(rootLink, "results")} {
		if _, err := (Folder{Dir: dir, MaxBytes: 1 << 20, Owns: owns}).Write("r-", ".txt", []byte("the result")); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// TestFolderBoundHoldsAcrossWritersOfOneProcess pins the trap "a bound per
// writer is no bound per folder": MaxSpillBytes was kept by a mutex of each
// Client, so the parallel sessions of one process, each with its own Client
// and the same SpillDir, could each find room and together pass it. Eight
// writers (separate Folder values, one spelling the path otherwise)
// write 40 files of 1000 bytes each at once into a folder bound to 3000
// bytes: after each write the folder never holds more, and at the end at
// most three files remain. Sabotage: without lockFolder in Write the
// folder ends over its bound in most runs (a sum of 5 to 12 files).
func TestFolderBoundHoldsAcrossWritersOfOneProcess(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "spill")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var over atomic.Int64
	for w := range 8 {
		path := dir
		if w == 0 {
			path = dir + "/../spill/." // the same folder, spelled otherwise
		}
		f := Folder{Dir: path, MaxBytes: 3000, Owns: owns}
		wg.Go(func() {
			for range 40 {
				if _, err := f.Write("r-", ".txt", make([]byte, 1000)); err != nil {
					t.Error(err)
					return
				}
				if n := ownedBytes(t, dir, owns); n > 3000 {
					over.Store(n)
				}
			}
		})
	}
	wg.Wait()
	if n := ownedBytes(t, dir, owns); n > 3000 || over.Load() > 0 {
		t.Errorf("the folder holds %d bytes at the end (%d at worst seen), bound 3000", n, over.Load())
	}
}

// ownedBytes returns the bytes of the owned files in dir.
func ownedBytes(t *testing.T, dir string, owns func(string) bool) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Error(err)
		return 0
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && owns(e.Name()) {
			n += info.Size()
		}
	}
	return n
}
