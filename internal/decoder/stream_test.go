package decoder

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

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

func TestRatio(t *testing.T) {
	t.Parallel()
	bomb := encode(t, "gzip", bytes.Repeat([]byte("r"), 1<<20)) // ratio ~ 1000
	prose := encode(t, "gzip", text(1<<20))                     // ratio ~ 10
	tests := []struct {
		name  string
		body  []byte
		ratio float64
		stage string
	}{
		{"bomb, ratio off", bomb, 0, ""},
		{"bomb, ratio 100", bomb, 100, "ratio"},
		{"prose, ratio 100", prose, 100, ""},
		{"prose, ratio 2", prose, 2, "ratio"},
		{"tiny bomb under the grace", encode(t, "gzip", bytes.Repeat([]byte("r"), limits.RatioGrace)), 1, ""},
	}
	for _, tt := range tests {
		d, _ := NewReader(bytes.NewReader(tt.body), "gzip", limits.Budget{MaxRatio: tt.ratio})
		out, err := readInPieces(d, 4096)
		if err == io.EOF {
			err = nil
		}
		if stageOf(err) != tt.stage {
			t.Errorf("%s: %v, want stage %q", tt.name, err, tt.stage)
		}
		if tt.stage != "" && len(out) > limits.RatioGrace+2*4096*int(tt.ratio)+(64<<10) {
			t.Errorf("%s: %d bytes returned before the ratio tripped, want it early", tt.name, len(out))
		}
	}
}

// TestRatioBoundary measures a body's final ratio R and checks that a
// limit a little above R passes and one well below it fails.
func TestRatioBoundary(t *testing.T) {
	t.Parallel()
	body := encode(t, "gzip", text(1<<20))
	d, _ := NewReader(bytes.NewReader(body), "gzip", limits.Budget{})
	if _, err := readInPieces(d, 4096); err != io.EOF {
		t.Fatal(err)
	}
	u := d.Usage()
	r := float64(u.DecodedBytes) / float64(u.WireBytes)
	for _, tt := range []struct {
		limit float64
		stage string
	}{{r * 1.05, ""}, {r / 1.5, "ratio"}} {
		_, err := decodeAll(t, body, "gzip", limits.Budget{MaxRatio: tt.limit})
		if stageOf(err) != tt.stage {
			t.Errorf("ReadAll(body of ratio %.2f, MaxRatio %.2f) = %v, want stage %q", r, tt.limit, err, tt.stage)
		}
	}
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

func TestTimeout(t *testing.T) {
	t.Parallel()
	body := []byte("a body that arrives one byte every 5 ms")
	d, _ := NewReader(&slowReader{data: body, delay: 5 * time.Millisecond}, "", limits.Budget{Timeout: 50 * time.Millisecond})
	_, err := readInPieces(d, 1)
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageTimeout || e.Limit != 50 || e.Observed < 50 || !errors.Is(err, limits.ErrTimeout) {
		t.Errorf("slow body, 50 ms timeout: %v, want stage timeout with limit 50", err)
	}
	d, _ = NewReader(&slowReader{data: body[:3], delay: time.Millisecond}, "", limits.Budget{Timeout: 10 * time.Second})
	if _, err := readInPieces(d, 1); err != io.EOF {
		t.Errorf("fast body, 10 s timeout: %v, want io.EOF", err)
	}
}
