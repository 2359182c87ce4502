package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
)

// spillServer answers /text/N with N two-byte characters, /ascii/N with N
// ASCII bytes, /bin/N with N bytes that are not UTF-8, /nul/N with N NUL
// bytes, and /gone/N with a 410
// of N two-byte characters.
func spillServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/{kind}/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		body, _ := spillBody(r.PathValue("kind"), n)
		if r.PathValue("kind") == "gone" {
			w.WriteHeader(http.StatusGone)
		}
		w.Write(body)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// spillBody returns the body spillServer sends for kind and n, and whether
// it is valid UTF-8.
func spillBody(kind string, n int) ([]byte, bool) {
	switch kind {
	case "ascii":
		return bytes.Repeat([]byte("a"), n), true
	case "bin":
		return bytes.Repeat([]byte{0xff}, n), false
	case "nul":
		return make([]byte, n), true // each printed as \u0000, 6 characters
	case "html":
		return bytes.Repeat([]byte("<"), n), true // printed as itself: fetch does not escape HTML
	}
	return []byte(strings.Repeat("é", n)), true
}

func TestSpill(t *testing.T) {
	t.Parallel()
	s := spillServer(t)
	tests := []struct {
		name    string
		args    []string // before the URL; -spill-dir is added unless noDir
		path    string
		noDir   bool
		exit    int
		spilled bool
		chars   int64
	}{
		{"at the threshold", []string{"-spill-chars", "10"}, "/text/10", false, exitComplete, false, 0},
		{"one over, counted in characters", []string{"-spill-chars", "10"}, "/text/11", false, exitComplete, true, 11},
		{"default threshold", nil, "/ascii/50000", false, exitComplete, false, 0},
		{"default threshold, one over", nil, "/ascii/50001", false, exitComplete, true, 50001},
		{"binary at the threshold", []string{"-spill-chars", "12"}, "/bin/9", false, exitComplete, false, 0}, // 12 base64 characters
		{"binary over", []string{"-spill-chars", "11"}, "/bin/9", false, exitComplete, true, 12},
		{"escapes at the threshold", []string{"-spill-chars", "60"}, "/nul/10", false, exitComplete, false, 0}, // 60 printed characters
		{"escapes over, counted as printed", []string{"-spill-chars", "59"}, "/nul/10", false, exitComplete, true, 60},
		{"49,999 NULs over the default threshold", nil, "/nul/49999", false, exitComplete, true, 299_994},
		{"error document over", []string{"-spill-chars", "10"}, "/gone/11", false, exitHTTPError, true, 11},
		{"zero spills any body", []string{"-spill-chars", "0"}, "/text/1", false, exitComplete, true, 1},
		{"zero keeps an empty body", []string{"-spill-chars", "0"}, "/text/0", false, exitComplete, false, 0},
		{"preview never spilled", []string{"-spill-chars", "10", "-preview", "30"}, "/text/100", false, exitComplete, false, 0},
		{"rejection never spilled", []string{"-spill-chars", "10", "-max-decoded", "100"}, "/text/100", false, exitRejected, false, 0},
		{"no spill dir", []string{"-spill-chars", "10"}, "/text/11", true, exitComplete, false, 0},
	}
	for _, tt := range tests {
		dir := privateDir(t)
		args := append([]string{}, tt.args...)
		if !tt.noDir {
			args = append(args, "-spill-dir", dir)
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append(args, s.URL+tt.path), &stdout, &stderr)
		var out output
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("%s: output: %v\n%s%s", tt.name, err, stdout.String(), stderr.String())
		}
		files, _ := os.ReadDir(dir)
		if code != tt.exit || (out.Spilled != nil) != tt.spilled || len(files) != map[bool]int{false: 0, true: 1}[tt.spilled] {
			t.Errorf("%s: exit %d, spilled %+v, %d files; want exit %d, spilled %v", tt.name, code, out.Spilled, len(files), tt.exit, tt.spilled)
			continue
		}
		kind, n := filepath.Split(tt.path)
		size, _ := strconv.Atoi(n)
		want, utf := spillBody(strings.Trim(kind, "/"), size)
		if !tt.spilled {
			if out.Status == boundhttp.StatusComplete && !tt.noDir {
				got := []byte(out.Body)
				if !utf {
					got, _ = base64.StdEncoding.DecodeString(out.BodyBase64)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s: the printed body is not the body sent", tt.name)
				}
			}
			continue
		}
		if out.Body != "" || out.BodyBase64 != "" || strings.Contains(stdout.String(), "éé") || !out.Complete {
			t.Errorf("%s: the spilled result carries its body, or is not marked whole: %s", tt.name, stdout.String())
		}
		sp := out.Spilled
		if !filepath.IsAbs(sp.Path) || filepath.Dir(sp.Path) != dir || sp.Chars != tt.chars || sp.Bytes != int64(len(want)) || sp.Note == "" {
			t.Errorf("%s: spilled %+v; want an absolute path in %s, %d characters, %d bytes, a note", tt.name, sp, dir, tt.chars, len(want))
		}
		got, err := os.ReadFile(sp.Path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: the file holds %d bytes (%v), want the %d bytes sent", tt.name, len(got), err, len(want))
		}
		if fi, err := os.Stat(sp.Path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: file mode %v (%v), want 0600", tt.name, fi.Mode(), err)
		}
	}
}

// TestSpillFailures: a bad threshold is a usage error; a file that cannot
// be written withholds the body all the same.
func TestSpillFailures(t *testing.T) {
	t.Parallel()
	s := spillServer(t)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-spill-chars", "-1", "-spill-dir", t.TempDir(), s.URL + "/text/1"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("-spill-chars -1: exit %d, want %d", code, exitUsage)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	code := run(context.Background(), []string{"-spill-chars", "10", "-spill-dir", filepath.Join(notDir, "sub"), s.URL + "/text/11"}, &stdout, &stderr)
	var out output
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("output: %v\n%s", err, stdout.String())
	}
	if code != exitFailed || out.SpillError == "" || out.Body != "" || out.Spilled != nil {
		t.Errorf("unwritable spill dir: exit %d, %s; want exit %d, a spill_error and no body", code, stdout.String(), exitFailed)
	}
}

// TestSpillFolderBound: the oldest spilled files go first so that the
// folder's spilled files stay within -spill-max-bytes; other files are left
// alone; a body larger than the bound is withheld, not spilled.
func TestSpillFolderBound(t *testing.T) {
	t.Parallel()
	s := spillServer(t)
	// 120 bytes of spilled files (1, 2, 3, oldest first) and a 22-byte body:
	// within 102 bytes only 1 must go (80+22), within 101 2 must go too.
	for _, tt := range []struct {
		max  string
		kept []string
	}{{"102", []string{"fetch-2.txt", "fetch-3.txt"}}, {"101", []string{"fetch-3.txt"}}} {
		dir := privateDir(t)
		old := time.Now().Add(-time.Hour)
		for i, name := range []string{"fetch-1.txt", "fetch-2.txt", "fetch-3.txt", "keep.txt"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, bytes.Repeat([]byte("o"), 40), 0o600); err != nil {
				t.Fatal(err)
			}
			mod := old.Add(time.Duration(i) * time.Minute)
			if err := os.Chtimes(p, mod, mod); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-spill-chars", "10", "-spill-max-bytes", tt.max, "-spill-dir", dir, s.URL + "/text/11"}, &stdout, &stderr)
		var out output
		json.Unmarshal(stdout.Bytes(), &out)
		if code != exitComplete || out.Spilled == nil {
			t.Fatalf("exit %d, %s; want a spilled body", code, stdout.String())
		}
		var names []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := append(tt.kept, filepath.Base(out.Spilled.Path), "keep.txt")
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("-spill-max-bytes %s: spill folder holds %v, want %v", tt.max, names, want)
		}
	}

	dir := privateDir(t)
	var stdout, stderr bytes.Buffer
	var out output
	code := run(context.Background(), []string{"-spill-chars", "10", "-spill-max-bytes", "21", "-spill-dir", dir, s.URL + "/text/11"}, &stdout, &stderr)
	json.Unmarshal(stdout.Bytes(), &out)
	if code != exitFailed || out.Spilled != nil || out.Body != "" || out.SpillError == "" {
		t.Errorf("22-byte body, 21-byte folder: exit %d, %s; want exit %d, a spill_error and no body", code, stdout.String(), exitFailed)
	}
	if code := run(context.Background(), []string{"-spill-max-bytes", "-1", "-spill-dir", dir, s.URL + "/text/1"}, &stdout, &stderr); code != exitUsage {
		t.Errorf("-spill-max-bytes -1: exit %d, want %d", code, exitUsage)
	}
}

// TestSpillCleanupOnlyItsOwnFiles: making room removes only files fetch
// itself created (fetch-<digits>.txt or .bin, as os.CreateTemp names
// them), never a user's file that merely begins with "fetch-" (the spill
// folder may be a shared one, ~/Downloads say), nor a symbolic link or
// what it points to.
func TestSpillCleanupOnlyItsOwnFiles(t *testing.T) {
	t.Parallel()
	s := spillServer(t)
	dir, other := privateDir(t), t.TempDir()
	target := filepath.Join(other, "target")
	if err := os.WriteFile(target, bytes.Repeat([]byte("t"), 40), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "fetch-7.txt")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"fetch-notes.txt", "fetch-backup.bin", "fetch-123.txt"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte("o"), 40), 0o600); err != nil {
			t.Fatal(err)
		}
		mod := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, mod, mod)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"-spill-chars", "10", "-spill-max-bytes", "30", "-spill-dir", dir, s.URL + "/text/11"}, &stdout, &stderr)
	var out output
	json.Unmarshal(stdout.Bytes(), &out)
	if code != exitComplete || out.Spilled == nil {
		t.Fatalf("exit %d, %s; want a spilled body", code, stdout.String())
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{filepath.Base(out.Spilled.Path), "fetch-7.txt", "fetch-backup.bin", "fetch-notes.txt"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("spill folder holds %v, want %v (only fetch-123.txt removed)", names, want)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the symbolic link's target: %v", err)
	}
}

// TestSpillDirKinds: a spill folder given as a symbolic link (which another
// user could point elsewhere) or as a regular file withholds the body with
// a spill_error; concurrent runs into one folder each get their own
// whole file.
func TestSpillDirKinds(t *testing.T) {
	t.Parallel()
	s := spillServer(t)
	spillTo := func(dir string) (int, output) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-spill-chars", "10", "-spill-dir", dir, s.URL + "/text/11"}, &stdout, &stderr)
		var out output
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Errorf("output: %v\n%s", err, stdout.String())
		}
		return code, out
	}
	want, _ := spillBody("text", 11)

	real := privateDir(t)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if code, out := spillTo(link); code != exitFailed || !strings.Contains(out.SpillError, "symbolic link") || out.Body != "" || out.Spilled != nil {
		t.Errorf("symlinked folder: exit %d, %+v; want exit %d and a spill_error naming the link", code, out, exitFailed)
	}
	if entries, _ := os.ReadDir(real); len(entries) != 0 {
		t.Errorf("symlinked folder: written through the link: %v", entries)
	}

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := spillTo(file); code != exitFailed || out.SpillError == "" || out.Body != "" || out.Spilled != nil {
		t.Errorf("folder is a file: exit %d, %+v; want exit %d, a spill_error, no body", code, out, exitFailed)
	}
	if got, _ := os.ReadFile(file); string(got) != "mine" {
		t.Errorf("the file given as folder now holds %q", got)
	}

	dir := privateDir(t)
	paths := make(chan string, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, out := spillTo(dir); out.Spilled != nil {
				paths <- out.Spilled.Path
			}
		})
	}
	wg.Wait()
	close(paths)
	seen := map[string]bool{}
	for p := range paths {
		got, err := os.ReadFile(p)
		if seen[p] || err != nil || !bytes.Equal(got, want) {
			t.Errorf("concurrent runs: %s repeated %v, holds %q (%v)", p, seen[p], got, err)
		}
		seen[p] = true
	}
	if len(seen) != 8 {
		t.Errorf("8 concurrent runs spilled %d files", len(seen))
	}
}

// privateDir returns a new folder private to the user.
var privateDir = testenc.PrivateDir

// TestSpillOrdinaryFolderAndBodiesThatNeedNoSpill: an ordinary folder of
// the user's (mode 0755, as mkdir and t.TempDir make it) takes a spill, and
// a body whose printed form is at the threshold is printed, whatever the
// folder: HTML characters count as fetch prints them (one character), not
// as the six of encoding/json's escape. Sabotage: refusing group- and
// other-readable folders again fails the spill with exit 4; counting the
// escapes spills (and fails) the 50,000-character HTML body.
func TestSpillOrdinaryFolderAndBodiesThatNeedNoSpill(t *testing.T) {
	t.Parallel()
	s := spillServer(t)
	ordinary := t.TempDir()
	if err := os.Chmod(ordinary, 0o755); err != nil {
		t.Fatal(err)
	}
	refused := t.TempDir()
	if err := os.Chmod(refused, 0o777); err != nil {
		t.Fatal(err)
	}
	fetch := func(dir, path string) (int, output, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"-spill-chars", "50000", "-spill-dir", dir, s.URL + path}, &stdout, &stderr)
		var out output
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Errorf("%s: output: %v\n%s", path, err, stdout.String())
		}
		return code, out, stderr.String()
	}
	for _, tt := range []struct {
		dir, path string
		spilled   bool
	}{
		{ordinary, "/ascii/50000", false},
		{ordinary, "/html/50000", false},
		{refused, "/html/50000", false}, // no spill needed: the folder is never looked at
		{ordinary, "/ascii/50001", true},
		{ordinary, "/html/50001", true},
	} {
		code, out, stderr := fetch(tt.dir, tt.path)
		if code != exitComplete || out.SpillError != "" || (out.Spilled != nil) != tt.spilled {
			t.Errorf("%s into mode %v: exit %d, spilled %v, spill_error %q, stderr %q; want exit %d, spilled %v",
				tt.path, modeOf(tt.dir), code, out.Spilled != nil, out.SpillError, stderr, exitComplete, tt.spilled)
			continue
		}
		n, _ := strconv.Atoi(tt.path[strings.LastIndex(tt.path, "/")+1:])
		want, _ := spillBody(strings.Split(tt.path, "/")[1], n)
		if !tt.spilled {
			if out.Body != string(want) {
				t.Errorf("%s: printed %d bytes, want the %d of the body", tt.path, len(out.Body), len(want))
			}
			continue
		}
		if got, err := os.ReadFile(out.Spilled.Path); err != nil || !bytes.Equal(got, want) || filepath.Dir(out.Spilled.Path) != tt.dir || out.Spilled.Chars != int64(n) {
			t.Errorf("%s: spilled to %s (%d chars), %d bytes (%v); want the body in %s", tt.path, out.Spilled.Path, out.Spilled.Chars, len(got), err, tt.dir)
		}
	}
	if code, out, _ := fetch(refused, "/ascii/50001"); code != exitFailed || out.Spilled != nil || out.Body != "" || !strings.Contains(out.SpillError, "write") {
		t.Errorf("a folder others may write to: exit %d, %+v; want exit %d, the body withheld, a spill_error", code, out.SpillError, exitFailed)
	}
}

// modeOf returns the permission bits of dir.
func modeOf(dir string) os.FileMode {
	fi, err := os.Stat(dir)
	if err != nil {
		return 0
	}
	return fi.Mode().Perm()
}
