package decoder

import (
	"bytes"
	"io"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestStreamingNeverExceedsLimit: reads never hand out more than the limit
// in total, never io.EOF before verification, and errors are sticky.
func TestStreamingNeverExceedsLimit(t *testing.T) {
	t.Parallel()
	const limit = 40000
	for _, c := range codings {
		bodies := []struct {
			name  string
			body  []byte
			stage string
		}{
			{"at limit", encode(t, c, text(limit)), ""},
			{"one over", encode(t, c, text(limit+1)), "decoded"},
			{"bomb", encode(t, c, bytes.Repeat([]byte("z"), 1<<20)), "decoded"},
		}
		for _, size := range []int{1, 7, 4096, 1 << 20} {
			for _, tt := range bodies {
				d, err := NewReader(bytes.NewReader(tt.body), c, limits.Budget{MaxDecodedBytes: limit})
				if err != nil {
					t.Fatal(err)
				}
				out, err := readInPieces(d, size)
				if len(out) > limit {
					t.Errorf("%s %s reads of %d: %d bytes returned, want at most %d", c, tt.name, size, len(out), limit)
				}
				want := tt.stage
				if want == "" && err == io.EOF {
					err = nil
				}
				if stageOf(err) != want {
					t.Errorf("%s %s reads of %d: end %v, want stage %q", c, tt.name, size, err, want)
				}
				if tt.stage != "" {
					if n, again := d.Read(make([]byte, 10)); n != 0 || again != err {
						t.Errorf("%s %s: Read after breach = %d, %v; want 0, the same error", c, tt.name, n, again)
					}
				}
				if u := d.Usage(); u.DecodedBytes != int64(len(out)) && tt.stage == "" {
					t.Errorf("%s %s: Usage().DecodedBytes = %d, want %d", c, tt.name, u.DecodedBytes, len(out))
				}
				d.Close()
			}
		}
	}
}

// TestNoEOFBeforeVerifiedEnd: a stream whose end is broken returns all its
// decodable bytes, then an error, never io.EOF.
func TestNoEOFBeforeVerifiedEnd(t *testing.T) {
	t.Parallel()
	data := text(100000)
	for _, c := range compressed {
		good := encode(t, c, data)
		for name, body := range map[string][]byte{
			"truncated": good[:len(good)-3],
			"trailing":  append(append([]byte(nil), good...), 'x'),
		} {
			d, _ := NewReader(bytes.NewReader(body), c, limits.Budget{})
			_, err := readInPieces(d, 1000)
			if err == io.EOF || stageOf(err) != "integrity" {
				t.Errorf("%s %s: streaming ends with %v, want stage integrity", c, name, err)
			}
		}
	}
}

func TestCloseAndReadAfterClose(t *testing.T) {
	t.Parallel()
	src := &closeRecorder{Reader: bytes.NewReader(encode(t, "gzip", text(1000)))}
	d, _ := NewReader(src, "gzip", limits.Budget{})
	d.Read(make([]byte, 10))
	if err := d.Close(); err != nil || src.closed != 1 {
		t.Errorf("Close() = %v with source closed %d times, want nil and 1", err, src.closed)
	}
	if n, err := d.Read(make([]byte, 10)); n != 0 || err == nil || err == io.EOF {
		t.Errorf("Read after Close = %d, %v; want 0 and an error", n, err)
	}
	d.Close()
	if src.closed != 1 {
		t.Errorf("second Close closed the source again (%d)", src.closed)
	}
}

type closeRecorder struct {
	*bytes.Reader
	closed int
}

func (c *closeRecorder) Close() error { c.closed++; return nil }
