package mcpbound

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientSpillFolderNotPrivate: a SpillDir that another user could
// reach (a symbolic link, a folder open to others) is refused: nothing is
// written there, and the result is cut with a marker that says why. The
// takeover by a second uid is tested in internal/spill. Sabotage: a spill
// that skips the folder checks writes into both.
func TestClientSpillFolderNotPrivate(t *testing.T) {
	base := t.TempDir()
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(privateDir(t), link)
	for _, tc := range []struct{ dir, why string }{{open, "gives other users access"}, {link, "symbolic link"}} {
		r := newRig(t, ClientLimits{MaxChars: 1000, SpillDir: tc.dir})
		out := onlyText(t, r.call(t, "t", textResult(strings.Repeat("s", 2000))))
		if n, m := parseMarker(t, out); m != 2000 || n == 0 || !strings.Contains(out, "not private") || !strings.Contains(out, tc.why) {
			t.Errorf("%s: %q, want a cut whose marker says the folder is not private (%s)", tc.dir, clip(out), tc.why)
		}
		target, _ := filepath.EvalSymlinks(tc.dir)
		if entries, _ := os.ReadDir(target); len(entries) != 0 {
			t.Errorf("%s: written to", tc.dir)
		}
	}
}
