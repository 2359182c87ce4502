package testenc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// MixedText returns a text of n characters (code points) in which one, two,
// three and four-byte UTF-8 sequences and a newline alternate, so that a cut
// inside a sequence, or a count in bytes, would show.
func MixedText(n int) string {
	alphabet := []rune("aé€😀 b\nç日")
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(alphabet[i%len(alphabet)])
	}
	return b.String()
}

// PrivateDir returns a new folder of mode 0700, as a spill folder must be
// (t.TempDir's are open to others to read); it goes when the test ends.
func PrivateDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}
