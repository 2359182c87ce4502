package body

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// panicSource is a body's source whose Read panics after its first bytes.
type panicSource struct {
	data []byte
	off  int
}

// panicAfter is how many bytes a panicSource gives before it panics: past
// the 512 a body reads before its first charge.
const panicAfter = 600

func (p *panicSource) Read(b []byte) (int, error) {
	if p.off >= panicAfter {
		panic("source broke")
	}
	n := copy(b, p.data[p.off:min(len(p.data), p.off+16)])
	p.off += n
	return n, nil
}

// TestReadAllPanicLeavesNoGuardNorCharge (trap: state owned by no one
// after a panic): a panic inside the source's Read while ReadAll reads a
// whole body, through the decoder or with none, leaves the guard free (a
// later Read fails for good, not as a concurrent Read) and gives back the
// body's in-flight charge at once, before any Close; Close then closes
// the source once.
func TestReadAllPanicLeavesNoGuardNorCharge(t *testing.T) {
	t.Parallel()
	data := text(4096)
	noise := make([]byte, 4096) // gzip leaves it longer than panicAfter
	rand.NewChaCha8([32]byte{1}).Read(noise)
	for _, tt := range []struct {
		name   string
		coding string
		wire   []byte
		exact  bool
	}{
		{"decoder, gzip", "gzip", gzipped(t, noise), false},
		{"decoder, identity", "", data, false},
		{"no decoder", "", data, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := limits.NewInFlight(1 << 20)
			var inUse int64 = -1
			src := newSource(nil, false)
			src.r = &spyPanic{panicSource: &panicSource{data: tt.wire}, f: f, seen: &inUse}
			b := new(Body)
			if err := b.Open(config(t, Server, f), &Source{Body: src, Closer: src, Encoding: tt.coding, Mode: Whole,
				SizeHint: int64(len(tt.wire)), Exact: tt.exact, Budget: limits.Budget{}.WithDefaults(),
				Ctx: context.Background()}); err != nil {
				t.Fatal(err)
			}
			if (b.d == nil) != tt.exact {
				t.Fatalf("read with no decoder: %v, want %v", b.d == nil, tt.exact)
			}
			func() {
				defer func() {
					if r := recover(); r == nil {
						t.Fatal("ReadAll did not panic")
					}
				}()
				b.ReadAll()
			}()
			if inUse <= 0 {
				t.Errorf("InUse() = %d when the source panicked, want the body charged", inUse)
			}
			if got := f.InUse(); got != 0 {
				t.Errorf("InUse() = %d after the panic, want 0", got)
			}
			if _, err := b.Read(make([]byte, 8)); err == nil || errors.Is(err, ErrConcurrentRead) || err == io.EOF {
				t.Errorf("Read after the panic = %v, want a sticky failure, not a concurrent Read", err)
			}
			b.Close()
			if n := src.closes.Load(); n != 1 {
				t.Errorf("source closed %d times, want 1", n)
			}
			if got := f.InUse(); got != 0 {
				t.Errorf("InUse() = %d after Close, want 0", got)
			}
		})
	}
}

// spyPanic records the in-flight budget's InUse when its source panics.
type spyPanic struct {
	*panicSource
	f    *limits.InFlight
	seen *int64
}

func (s *spyPanic) Read(p []byte) (int, error) {
	if s.off >= panicAfter {
		*s.seen = s.f.InUse()
	}
	return s.panicSource.Read(p)
}
