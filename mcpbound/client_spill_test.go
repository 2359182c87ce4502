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
	for _, tc := range []struct{ dir, why string }{{open, "lets other users write in it"}, {link, "symbolic link"}} {
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

// TestClientCutFitsCeilingWhenSpillErrorQuotesAPathInAnotherScript: the
// reason a result could not be saved quotes the folder's path, and a path
// written in another script (é, 日本) is escaped byte by byte, four
// characters a byte: the marker must still fit the ceiling, at
// MinClientChars and with TailChars at its maximum. Found: 240 bytes of
// "é" made the marker 813 characters under MaxChars 512. Sabotage:
// echoing the reason to 300 bytes whatever the room -> this test fails.
func TestClientCutFitsCeilingWhenSpillErrorQuotesAPathInAnotherScript(t *testing.T) {
	base := t.TempDir()
	for _, name := range []string{strings.Repeat("é", 120), strings.Repeat("日本", 40)} {
		open := filepath.Join(base, name)
		if err := os.Mkdir(open, 0o700); err != nil {
			t.Fatal(err)
		}
		os.Chmod(open, 0o777)
		for _, mc := range []int{MinClientChars, MinClientChars + 1, 600, 2000} {
			for _, tail := range []int{0, mc - MinClientChars} {
				r := newRig(t, ClientLimits{MaxChars: mc, TailChars: tail, SpillDir: open})
				text := mixed(3 * mc)
				out := onlyText(t, r.call(t, "t", textResult(text)))
				if _, m := parseMarker(t, out); chars(out) > mc || m != chars(text) || !strings.Contains(out, "not private") {
					t.Errorf("MaxChars %d, TailChars %d, folder of %d bytes: %d characters, M %d: %q", mc, tail, len(name), chars(out), m, clip(out))
				}
			}
		}
		if entries, _ := os.ReadDir(open); len(entries) != 0 {
			t.Errorf("written to the open folder")
		}
	}
}
