package decoder

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// stallReader returns body, then (0, nil) forever: a misbehaving source
// (io.Reader discourages it, bufio gives up after 100 such reads). It
// panics after maxCalls reads so that a loop that never gives up fails the
// test instead of hanging it.
type stallReader struct {
	r        io.Reader
	calls    int
	maxCalls int
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.calls++; s.calls > s.maxCalls {
		panic("stallReader: read in an unbounded loop")
	}
	n, err := s.r.Read(p)
	if err == io.EOF {
		return n, nil
	}
	return n, err
}

// TestSourceStallIsBounded pins the trap "a reader that returns 0, nil
// forever": ReadAll and a streaming Read loop give up with io.ErrNoProgress
// after a bounded number of empty reads, under every coding, instead of
// spinning (identity, br and zstd used to loop forever).
func TestSourceStallIsBounded(t *testing.T) {
	t.Parallel()
	data := text(3000)
	for _, c := range codings {
		body := encode(t, c, data)
		call := func(f func(src io.Reader) error) (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errors.New("unbounded: " + r.(string))
				}
			}()
			return f(&stallReader{r: bytes.NewReader(body), maxCalls: 10000})
		}
		err := call(func(src io.Reader) error {
			got, err := ReadAll(src, c, limits.Budget{})
			if got != nil {
				t.Errorf("ReadAll(%s, stalling source) returned %d bytes", c, len(got))
			}
			return err
		})
		if !errors.Is(err, io.ErrNoProgress) {
			t.Errorf("ReadAll(%s, stalling source) = %v, want io.ErrNoProgress", c, err)
		}
		err = call(func(src io.Reader) error {
			d, err := NewReader(src, c, limits.Budget{})
			if err != nil {
				return err
			}
			defer d.Close()
			_, err = readInPieces(d, 512)
			return err
		})
		if !errors.Is(err, io.ErrNoProgress) {
			t.Errorf("streaming %s, stalling source: %v, want io.ErrNoProgress", c, err)
		}
	}
}

// overReader claims extra bytes more than it was asked for (n > len(p)),
// or, for a negative extra, a count of extra, as a buggy source might.
type overReader struct {
	r     io.Reader
	extra int
}

func (o overReader) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	switch {
	case n > 0 && o.extra > 0:
		n = len(p) + o.extra
	case n > 0:
		n = o.extra
	}
	return n, err
}

// TestSourceInvalidCountRejected pins the trap "a source returning more
// bytes than asked (n > len(p))": the Reader fails with an error instead of
// panicking (identity and zstd sliced past the buffer) or counting bytes
// that were never written (the other codings' bufio took them as data).
func TestSourceInvalidCountRejected(t *testing.T) {
	t.Parallel()
	data := text(3000)
	for _, c := range codings {
		body := encode(t, c, data)
		for _, extra := range []int{1, 10, -1 << 20} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("ReadAll(%s, source claims len(p)%+d bytes) panicked: %v", c, extra, r)
					}
				}()
				got, err := ReadAll(overReader{bytes.NewReader(body), extra}, c, limits.Budget{})
				if !errors.Is(err, errSourceCount) || got != nil {
					t.Errorf("ReadAll(%s, source claims len(p)%+d bytes) = %d bytes, %v; want %v", c, extra, len(got), err, errSourceCount)
				}
			}()
		}
	}
}

// TestCheckJSONSourceStallIsBounded pins the trap "a reader that returns 0,
// nil forever" for CheckJSON, whose read loop spun on such a source.
func TestCheckJSONSourceStallIsBounded(t *testing.T) {
	t.Parallel()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = errors.New("unbounded: " + r.(string))
			}
		}()
		return CheckJSON(&stallReader{r: bytes.NewReader([]byte(`[1,2`)), maxCalls: 10000}, limits.JSON{})
	}()
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("CheckJSON(stalling source) = %v, want io.ErrNoProgress", err)
	}
}

// TestCheckJSONSourceInvalidCountRejected pins the trap "a source returning
// more bytes than asked (n > len(p))" for CheckJSON, which sliced its
// buffer with the count and panicked.
func TestCheckJSONSourceInvalidCountRejected(t *testing.T) {
	t.Parallel()
	for _, extra := range []int{1, -1} {
		err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errors.New("panic")
				}
			}()
			return CheckJSON(overReader{bytes.NewReader([]byte(`[1,2]`)), extra}, limits.JSON{})
		}()
		if !errors.Is(err, errSourceCount) {
			t.Errorf("CheckJSON(source claims %d extra bytes) = %v, want %v", extra, err, errSourceCount)
		}
	}
}
