package decoder

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// vectorsDir holds the reference vectors of the brotli and zstd projects,
// beside the repository (not copied into it).
const vectorsDir = "../../../shared/vectors"

// needTool returns the path of a command-line encoder; see
// testenc.NeedTool.
var needTool = testenc.NeedTool

// TestConformanceCLI decodes bodies written by the gzip, brotli and zstd
// command-line tools, which no one here wrote.
func TestConformanceCLI(t *testing.T) {
	t.Parallel()
	data := text(3 << 20)
	bomb := bytes.Repeat([]byte("A"), 2<<20)
	tools := []struct {
		coding, tool string
		args         []string
	}{
		{"gzip", "gzip", []string{"-c", "-9"}},
		{"gzip", "gzip", []string{"-c", "-1"}},
		{"br", "brotli", []string{"-c"}}, // quality 11, lgwin 24: a 16 MiB window
		{"br", "brotli", []string{"-c", "-q", "5", "-w", "16"}},
		{"zstd", "zstd", []string{"-c", "-q", "-19"}},
		{"zstd", "zstd", []string{"-c", "-q", "--no-check"}},
	}
	for _, tt := range tools {
		t.Run(tt.tool+strings.Join(tt.args, ""), func(t *testing.T) {
			t.Parallel()
			tool := needTool(t, tt.tool)
			body := run(t, data, tool, tt.args...)
			b := limits.Budget{MaxDecodedBytes: int64(len(data))}
			got, err := decodeAll(t, body, tt.coding, b)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("ReadAll(%s %v output) = %d bytes, %v; want the %d bytes", tt.tool, tt.args, len(got), err, len(data))
			}
			b.MaxDecodedBytes--
			if _, err := decodeAll(t, body, tt.coding, b); stageOf(err) != "decoded" {
				t.Errorf("ReadAll(%s output, limit one under) = %v, want stage decoded", tt.tool, err)
			}
			bb := run(t, bomb, tool, tt.args...)
			_, err = decodeAll(t, bb, tt.coding, limits.Budget{MaxDecodedBytes: 64 << 10, MaxWireBytes: 64 << 10})
			if stageOf(err) != "decoded" {
				t.Errorf("ReadAll(%s bomb of %d bytes) = %v, want stage decoded", tt.tool, len(bb), err)
			}
		})
	}
	t.Run("gzip members", func(t *testing.T) {
		t.Parallel()
		tool := needTool(t, "gzip")
		two := append(run(t, []byte("first\n"), tool, "-c"), run(t, []byte("second\n"), tool, "-c")...)
		if _, err := decodeAll(t, two, "gzip", limits.Budget{}); stageOf(err) != "integrity" {
			t.Errorf("two gzip members, default: %v, want stage integrity", err)
		}
		got, err := decodeAll(t, two, "gzip", limits.Budget{}, WithMaxMembers(2))
		if err != nil || string(got) != "first\nsecond\n" {
			t.Errorf("two gzip members, WithMaxMembers(2) = %q, %v", got, err)
		}
	})
	t.Run("zstd long window", func(t *testing.T) {
		t.Parallel()
		tool := needTool(t, "zstd")
		// --long=27 declares a 128 MiB window.
		body := run(t, data, tool, "-c", "-q", "--long=27", "-1")
		_, err := decodeAll(t, body, "zstd", limits.Budget{})
		var e *limits.Error
		if !errors.As(err, &e) || e.Stage != limits.StageWindow || e.Observed != 128<<20 {
			t.Errorf("zstd --long=27 output = %v, want stage window, declared 128 MiB", err)
		}
		got, err := decodeAll(t, body, "zstd", limits.Budget{MaxWindowBytes: 128 << 20})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("zstd --long=27 output, window limit 128 MiB: %d bytes, %v", len(got), err)
		}
	})
	t.Run("brotli large window", func(t *testing.T) {
		t.Parallel()
		tool := needTool(t, "brotli")
		body := run(t, data, tool, "-c", "-q", "5", "--large_window=26")
		_, err := decodeAll(t, body, "br", limits.Budget{})
		if stageOf(err) != "window" {
			t.Errorf("brotli --large_window=26 output = %v, want stage window", err)
		}
		got, err := decodeAll(t, body, "br", limits.Budget{MaxWindowBytes: 64 << 20})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("brotli --large_window=26, window limit 64 MiB: %d bytes, %v", len(got), err)
		}
	})
}

func vectors(t *testing.T, sub string) string {
	t.Helper()
	dir := filepath.Join(vectorsDir, sub)
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("reference vectors not found at %s (they live in shared/vectors beside the repository): %v", dir, err)
	}
	return dir
}

// TestBrotliVectors decodes every *.compressed* file of the brotli project's
// test data and compares it with the original, at the exact decoded limit
// and one byte under it.
func TestBrotliVectors(t *testing.T) {
	t.Parallel()
	dir := vectors(t, "brotli")
	files, _ := filepath.Glob(filepath.Join(dir, "*.compressed*"))
	if len(files) == 0 {
		t.Fatalf("no brotli vectors in %s", dir)
	}
	for _, f := range files {
		orig := f[:strings.Index(f, ".compressed")]
		want, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := os.ReadFile(f)
		limit := max(int64(len(want)), 1)
		got, err := decodeAll(t, body, "br", limits.Budget{MaxDecodedBytes: limit})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", filepath.Base(f), len(got), err, len(want))
			continue
		}
		if len(want) > 1 { // a limit of 0 would mean the default
			if _, err := decodeAll(t, body, "br", limits.Budget{MaxDecodedBytes: limit - 1}); stageOf(err) != "decoded" {
				t.Errorf("%s, limit %d: %v, want stage decoded", filepath.Base(f), limit-1, err)
			}
		}
	}
}

// TestZstdVectors decodes the zstd project's good vectors like the
// reference decoder does, and rejects its bad ones as malformed.
func TestZstdVectors(t *testing.T) {
	t.Parallel()
	dir := vectors(t, "zstd")
	ok, _ := filepath.Glob(filepath.Join(dir, "ok", "*.zst"))
	bad, _ := filepath.Glob(filepath.Join(dir, "bad", "*.zst"))
	if len(ok) == 0 || len(bad) == 0 {
		t.Fatalf("zstd vectors missing in %s", dir)
	}
	ref, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer ref.Close()
	for _, f := range ok {
		body, _ := os.ReadFile(f)
		want, err := ref.DecodeAll(body, nil)
		if err != nil {
			t.Fatalf("%s: reference decoder: %v", filepath.Base(f), err)
		}
		got, err := decodeAll(t, body, "zstd", limits.Budget{MaxDecodedBytes: max(int64(len(want)), 1)}, WithMaxMembers(8))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want %d bytes", filepath.Base(f), len(got), err, len(want))
		}
	}
	// Vectors the decoder underneath accepts. Their output is still held to
	// the budget; the gap is the decoder's, not the accounting's.
	known := map[string]string{
		"off0.bin.zst": "a match offset of 0 (facebook/zstd#3937); klauspost/compress v1.20.4 and zstd 1.5.4 accept it",
	}
	for _, f := range bad {
		body, _ := os.ReadFile(f)
		if why, ok := known[filepath.Base(f)]; ok {
			got, err := decodeAll(t, body, "zstd", limits.Budget{MaxDecodedBytes: 16})
			t.Logf("%s: known gap, %s: %d bytes, %v", filepath.Base(f), why, len(got), err)
			if len(got) > 16 {
				t.Errorf("%s: %d bytes over a 16-byte limit", filepath.Base(f), len(got))
			}
			continue
		}
		if _, err := decodeAll(t, body, "zstd", limits.Budget{}, WithMaxMembers(8)); stageOf(err) != "integrity" {
			t.Errorf("%s: %v, want stage integrity", filepath.Base(f), err)
		}
	}
}
