package decoder

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// encode compresses data with coding.
func encode(t testing.TB, coding string, data []byte) []byte {
	t.Helper()
	return testenc.Encode(coding, data)
}

// layered applies the codings of a Content-Encoding list in order.
func layered(t testing.TB, data []byte, codings ...string) []byte {
	t.Helper()
	return testenc.Layered(data, codings...)
}

var codings = testenc.Codings

// text is a deterministic, moderately compressible body.
func text(n int) []byte { return testenc.Text(n) }

var stageOf = testenc.StageOf

var cpuPerOp = testenc.CPUPerOp

// decodeAll runs ReadAll and checks the whole-or-nothing rule.
func decodeAll(t testing.TB, body []byte, ce string, b limits.Budget, opts ...Option) ([]byte, error) {
	t.Helper()
	got, err := ReadAll(bytes.NewReader(body), ce, b, opts...)
	if err != nil && got != nil {
		t.Fatalf("ReadAll(%s) returned %d bytes with error %v, want none", ce, len(got), err)
	}
	return got, err
}

// allocated returns the bytes allocated by f.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// benchBody is JSON-like text of a few MiB, the realistic input.
var benchBody = text(4 << 20)

// compressed are the codings with an end-of-stream marker.
var compressed = []string{"gzip", "deflate", "br", "zstd"}

type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// largeWindowEmpty is a large-window brotli stream (RFC 9841) declaring
// 1<<wbits bytes of window and holding nothing: the header, then an empty
// last meta-block (ISLAST=1, ISLASTEMPTY=1).
func largeWindowEmpty(wbits byte) []byte {
	return []byte{0x11, wbits | 0xc0}
}

// readInPieces reads d with reads of at most size bytes, and returns all
// bytes returned, the terminal error, and whether the total ever exceeded
// limit.
func readInPieces(d *Reader, size int) ([]byte, error) {
	var out []byte
	buf := make([]byte, size)
	for range 1 << 24 {
		n, err := d.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
	return out, errors.New("no end after 1<<24 reads")
}

// slowReader returns one byte per call, sleeping between calls.
type slowReader struct {
	data  []byte
	delay time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	time.Sleep(s.delay)
	p[0] = s.data[0]
	s.data = s.data[1:]
	return 1, nil
}

// run runs a command with stdin and returns its stdout.
func run(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, errb.String())
	}
	return out.Bytes()
}

func splitCodings(ce string) []string {
	if ce == "identity" {
		return nil
	}
	return ParseContentEncoding(ce)
}
