package decoder

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// lateEOFReader returns first at once; its last Read blocks for delay and
// then returns rest with io.EOF (dataWithEOF) or, after rest came at once,
// returns io.EOF alone.
type lateEOFReader struct {
	first, rest []byte
	delay       time.Duration
	dataWithEOF bool
}

func (r *lateEOFReader) Read(p []byte) (int, error) {
	if len(r.first) > 0 {
		n := copy(p, r.first)
		r.first = r.first[n:]
		return n, nil
	}
	if !r.dataWithEOF && len(r.rest) > 0 {
		n := copy(p, r.rest)
		r.rest = r.rest[n:]
		return n, nil
	}
	if len(p) < len(r.rest) {
		return 0, io.ErrShortBuffer // the test sizes rest to fit one Read
	}
	time.Sleep(r.delay)
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, io.EOF
}

// TestTimeoutCheckedAfterBlockedRead pins the trap "time checked only before
// a Read": the elapsed time was checked before each Read only, so a source
// whose last Read blocked past the deadline and then returned io.EOF was
// accepted. A body that reached its end after the deadline is rejected with
// stage timeout, in ReadAll and in streaming, also when the last Read
// returned data and io.EOF together.
func TestTimeoutCheckedAfterBlockedRead(t *testing.T) {
	t.Parallel()
	data := text(8 << 10)
	const timeout = 50 * time.Millisecond
	for _, c := range []string{"identity", "gzip"} {
		body := encode(t, c, data)
		half := len(body) - 100
		for _, withEOF := range []bool{false, true} {
			for _, streaming := range []bool{false, true} {
				src := &lateEOFReader{first: body[:half], rest: body[half:], delay: 4 * timeout, dataWithEOF: withEOF}
				b := limits.Budget{Timeout: timeout}
				var err error
				if streaming {
					d, _ := NewReader(src, c, b)
					_, err = io.ReadAll(d)
				} else {
					_, err = ReadAll(src, c, b)
				}
				var e *limits.Error
				if !errors.As(err, &e) || e.Stage != limits.StageTimeout || e.Observed < e.Limit || !errors.Is(err, limits.ErrTimeout) {
					t.Errorf("%s, data+EOF %v, streaming %v: err = %v, want stage timeout", c, withEOF, streaming, err)
				}
			}
		}
		// The same source well within a generous timeout passes.
		src := &lateEOFReader{first: body[:half], rest: body[half:], delay: time.Millisecond, dataWithEOF: true}
		got, err := ReadAll(src, c, limits.Budget{Timeout: time.Minute})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s, fast source: ReadAll = %d bytes, %v, want the body", c, len(got), err)
		}
	}
}

// TestSubMillisecondTimeoutText: a Reader whose Timeout is under 1 ms and
// whose body comes late reports Limit 0 (whole milliseconds, rounded down)
// and says "under 1 ms", never "within 0 ms".
func TestSubMillisecondTimeoutText(t *testing.T) {
	t.Parallel()
	src := &lateEOFReader{first: []byte("abc"), rest: []byte("def"), delay: 5 * time.Millisecond, dataWithEOF: true}
	_, err := ReadAll(src, "", limits.Budget{Timeout: 500 * time.Microsecond})
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageTimeout {
		t.Fatalf("late body, Timeout 500µs: %v, want stage timeout", err)
	}
	if e.Limit != 0 || e.Observed < 5 {
		t.Errorf("late body, Timeout 500µs: limit %d, observed %d; want 0 and at least 5 ms", e.Limit, e.Observed)
	}
	if msg := e.Error(); !strings.Contains(msg, "within a timeout under 1 ms") || strings.Contains(msg, " 0 ms") {
		t.Errorf("late body, Timeout 500µs: Error() = %q, want \"within a timeout under 1 ms\" and no \"0 ms\"", msg)
	}
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
