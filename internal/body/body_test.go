package body

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// gzipped returns data as one gzip member.
func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// config returns a client Config with no decoding options, or with an
// in-flight budget f.
func config(t *testing.T, side Side, f *limits.InFlight) *Config {
	t.Helper()
	var opts []decoder.Option
	if f != nil {
		opts = append(opts, decoder.WithInFlight(f))
	}
	dc, err := decoder.NewConfig(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &Config{Side: side, Decoder: dc}
}

// source is a body's bytes off the connection that counts its Closes; a
// gate, when set, blocks every Read until the gate closes or Close is
// called (as closing a connection ends a blocked read).
type source struct {
	r      io.Reader
	gate   chan struct{}
	inRead chan struct{} // signalled when a Read blocks on the gate
	shut   chan struct{}
	closes atomic.Int32
}

func newSource(data []byte, gated bool) *source {
	s := &source{r: bytes.NewReader(data), shut: make(chan struct{})}
	if gated {
		s.gate, s.inRead = make(chan struct{}), make(chan struct{}, 1)
	}
	return s
}

func (s *source) Read(p []byte) (int, error) {
	if s.gate != nil {
		select {
		case s.inRead <- struct{}{}:
		default:
		}
		select {
		case <-s.gate:
		case <-s.shut:
			return 0, errors.New("source closed")
		}
	}
	return s.r.Read(p)
}

func (s *source) Close() error {
	if s.closes.Add(1) == 1 {
		close(s.shut)
	}
	return nil
}

// open opens a body of data (gzip-coded when coding is "gzip") in mode m.
func open(t *testing.T, cfg *Config, m Mode, coding string, src *source) *Body {
	t.Helper()
	b := new(Body)
	if err := b.Open(cfg, &Source{Body: src, Closer: src, Encoding: coding, Mode: m,
		Budget: limits.Budget{}.WithDefaults(), Ctx: context.Background()}); err != nil {
		t.Fatal(err)
	}
	return b
}

var modes = []struct {
	name string
	mode Mode
}{{"stream", Stream}, {"whole", Whole}, {"lazy", Lazy}}

// TestModesDeliverTheVerifiedBody: every mode hands on the decoded bytes
// byte-exact, ends with io.EOF and records the usage as verified; a Whole
// body is read by its owner (ReadAll) before anyone reads it, a Lazy one on
// its first Read, and the source of a whole body is done with (closed on
// the client) once it was read.
func TestModesDeliverTheVerifiedBody(t *testing.T) {
	data := bytes.Repeat([]byte("boundhttp "), 10_000)
	for _, m := range modes {
		for _, coding := range []string{"", "gzip"} {
			t.Run(m.name+"/"+coding, func(t *testing.T) {
				wire := data
				if coding == "gzip" {
					wire = gzipped(t, data)
				}
				src := newSource(wire, false)
				b := open(t, config(t, Client, nil), m.mode, coding, src)
				if m.mode == Whole {
					if err := b.ReadAll(); err != nil {
						t.Fatalf("ReadAll: %v", err)
					}
					if got := b.Size(); got != int64(len(data)) {
						t.Errorf("Size() = %d, want %d", got, len(data))
					}
				}
				got, err := io.ReadAll(b)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read %d bytes, %v; want %d bytes, nil", len(got), err, len(data))
				}
				u, verified := b.Usage().Get()
				if !verified || u.DecodedBytes != int64(len(data)) || u.WireBytes != int64(len(wire)) {
					t.Errorf("usage %+v verified %v; want %d wire, %d decoded, verified", u, verified, len(wire), len(data))
				}
				if m.mode != Stream && src.closes.Load() != 1 {
					t.Errorf("source closed %d times after a whole read; want 1", src.closes.Load())
				}
				b.Close()
				if n := src.closes.Load(); n != 1 {
					t.Errorf("source closed %d times; want 1", n)
				}
			})
		}
	}
}

// TestWholeBodyNeverReadIsClosed: a Whole body its owner did not read
// (ReadAll) is never served as a body: a Read fails instead of reading the
// source unverified.
func TestWholeBodyNeverReadIsClosed(t *testing.T) {
	b := open(t, config(t, Client, nil), Whole, "", newSource([]byte("x"), false))
	defer b.Close()
	if n, err := b.Read(make([]byte, 8)); n != 0 || !errors.Is(err, ErrClosed) {
		t.Errorf("Read = %d, %v; want 0, ErrClosed", n, err)
	}
}

// TestReadAfterCloseFails: in every mode a Read, WriteTo or Take after
// Close fails with ErrClosed (or Config.ClosedErr, the server's stand-in),
// and Close is idempotent: the source is closed once.
func TestReadAfterCloseFails(t *testing.T) {
	custom := errors.New("custom closed")
	for _, m := range modes {
		for _, closedErr := range []error{nil, custom} {
			t.Run(m.name, func(t *testing.T) {
				cfg := config(t, Client, nil)
				cfg.ClosedErr = closedErr
				want := closedErr
				if want == nil {
					want = ErrClosed
				}
				src := newSource([]byte("hello"), false)
				b := open(t, cfg, m.mode, "", src)
				for range 2 {
					b.Close()
				}
				if n := src.closes.Load(); n != 1 {
					t.Errorf("source closed %d times; want 1", n)
				}
				if _, err := b.Read(make([]byte, 8)); !errors.Is(err, want) {
					t.Errorf("Read after Close: %v; want %v", err, want)
				}
				if m.mode != Stream {
					if _, err := b.WriteTo(io.Discard); !errors.Is(err, want) {
						t.Errorf("WriteTo after Close: %v; want %v", err, want)
					}
					if _, err := b.Take(); !errors.Is(err, want) {
						t.Errorf("Take after Close: %v; want %v", err, want)
					}
				}
				if b.d != nil {
					t.Error("the decoder is still held after Close")
				}
			})
		}
	}
}

// TestCloseDuringBlockedRead pins the guard's protocol when Close comes
// from another goroutine while a Read is blocked on the source: a second
// Read meanwhile fails as a concurrent Read; Close aborts the source, the
// blocked Read returns ErrClosed (on the client) and only then, on leaving,
// releases the decoder and the in-flight charge; later Reads fail closed.
func TestCloseDuringBlockedRead(t *testing.T) {
	for _, m := range []Mode{Stream, Lazy} {
		f := limits.NewInFlight(1 << 20)
		src := newSource(gzipped(t, []byte("never seen")), true)
		b := open(t, config(t, Client, f), m, "gzip", src)
		done := make(chan error, 1)
		go func() {
			_, err := b.Read(make([]byte, 64))
			done <- err
		}()
		<-src.inRead // the Read holds the guard, blocked on the source
		if _, err := b.Read(make([]byte, 1)); !errors.Is(err, ErrConcurrentRead) {
			t.Errorf("mode %d: second Read during a Read: %v; want ErrConcurrentRead", m, err)
		}
		if b.d == nil {
			t.Fatalf("mode %d: the decoder was released while a Read held it", m)
		}
		b.Close()
		select {
		case err := <-done:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("mode %d: the aborted Read returned %v; want ErrClosed", m, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("mode %d: Read still blocked 10 s after Close", m)
		}
		if b.d != nil {
			t.Errorf("mode %d: the decoder is still held after the aborted Read returned", m)
		}
		if got := f.InUse(); got != 0 {
			t.Errorf("mode %d: InUse() = %d after Close; want 0", m, got)
		}
		if _, err := b.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
			t.Errorf("mode %d: Read after Close: %v; want ErrClosed", m, err)
		}
	}
}

// TestFinishReleasesWithoutClosingSource: Finish (the server's end of a
// body once the handler returned) gives everything back without closing
// the source (closing a request body with unread bytes would make net/http
// read them); with a Read in progress the release waits for that Read.
func TestFinishReleasesWithoutClosingSource(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		f := limits.NewInFlight(1 << 20)
		src := newSource(gzipped(t, []byte("unread")), false)
		b := open(t, config(t, Server, f), Stream, "gzip", src)
		if _, err := b.Read(make([]byte, 2)); err != nil {
			t.Fatal(err)
		}
		b.Finish()
		if src.closes.Load() != 0 {
			t.Error("Finish closed the source")
		}
		if b.d != nil || f.InUse() != 0 {
			t.Errorf("after Finish: decoder held %v, InUse %d; want released, 0", b.d != nil, f.InUse())
		}
		if _, err := b.Read(make([]byte, 1)); !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Finish: %v; want ErrClosed", err)
		}
	})
	t.Run("during a Read", func(t *testing.T) {
		src := newSource([]byte("late bytes"), true)
		b := open(t, config(t, Server, nil), Stream, "", src)
		done := make(chan error, 1)
		go func() {
			_, err := b.Read(make([]byte, 64))
			done <- err
		}()
		<-src.inRead
		b.Finish()
		if b.d == nil {
			t.Fatal("Finish released the decoder while a Read held it")
		}
		close(src.gate) // the source answers; the Read leaves and releases
		<-done
		if b.d != nil {
			t.Error("the decoder is still held after the Read that outlived Finish returned")
		}
		if src.closes.Load() != 0 {
			t.Error("Finish closed the source")
		}
	})
}

// TestTakeHandsOverTheRest: Take of a whole body not yet read returns all
// of it; after a partial Read it returns the rest; either way the body is
// then at its end and the in-flight charge is the caller's, not the body's.
func TestTakeHandsOverTheRest(t *testing.T) {
	data := []byte(strings.Repeat("0123456789", 20_000))
	for _, skip := range []int{0, 7} {
		f := limits.NewInFlight(1 << 20)
		b := open(t, config(t, Client, f), Whole, "gzip", newSource(gzipped(t, data), false))
		if err := b.ReadAll(); err != nil {
			t.Fatal(err)
		}
		if skip > 0 {
			if _, err := io.ReadFull(b, make([]byte, skip)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Take()
		if err != nil || !bytes.Equal(got, data[skip:]) {
			t.Errorf("skip %d: Take = %d bytes, %v; want %d bytes", skip, len(got), err, len(data)-skip)
		}
		if n, err := b.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Errorf("skip %d: Read after Take = %d, %v; want 0, EOF", skip, n, err)
		}
		b.Close()
		if got := f.InUse(); got != 0 {
			t.Errorf("skip %d: InUse() = %d after Take and Close; want 0", skip, got)
		}
	}
}

// TestGuardProtocol walks the guard's state machine: exactly one of Close
// and the Read in progress releases the state.
func TestGuardProtocol(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps string // e: enter, l: leave, c: close
		want  []string
	}{
		{"close idle", "c", []string{"close first release"}},
		{"close twice", "cc", []string{"close first release", "close"}},
		{"read then close", "elc", []string{"enter ok", "leave", "close first release"}},
		{"close during read", "ecl", []string{"enter ok", "close first", "leave release"}},
		{"read after close", "ce", []string{"close first release", "enter closed"}},
		{"concurrent read", "ee", []string{"enter ok", "enter concurrent"}},
		{"close during read, read again", "ecle", []string{"enter ok", "close first", "leave release", "enter closed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var g guard
			var got []string
			for _, s := range tt.steps {
				switch s {
				case 'e':
					switch err := g.enter(); err {
					case nil:
						got = append(got, "enter ok")
					case ErrClosed:
						got = append(got, "enter closed")
					case ErrConcurrentRead:
						got = append(got, "enter concurrent")
					}
				case 'l':
					if g.leave() {
						got = append(got, "leave release")
					} else {
						got = append(got, "leave")
					}
				case 'c':
					first, release := g.close()
					s := "close"
					if first {
						s += " first"
					}
					if release {
						s += " release"
					}
					got = append(got, s)
				}
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// deadlineWriter is a ResponseWriter that records the read deadlines set
// on its connection.
type deadlineWriter struct {
	http.ResponseWriter
	mu  sync.Mutex
	set []time.Time
}

func (w *deadlineWriter) SetReadDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set = append(w.set, t)
	return nil
}

func (w *deadlineWriter) calls() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.set...)
}

// TestLateEndLeavesConnDeadlineAlone pins the trap of a Read that outlives
// its handler (a handler behind http.TimeoutHandler whose goroutine still
// reads): reaching the verified end after Finish cleared the connection's
// read deadline, by then net/http's own deadline for the next request's
// headers, which a slow client could then hold open unbounded. Once the
// handler's end (Finish) returned, the body never touches the connection's
// deadline again.
func TestLateEndLeavesConnDeadlineAlone(t *testing.T) {
	src := newSource(nil, true) // the end, once the gate opens
	w := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
	b := new(Body)
	budget := limits.Budget{Timeout: time.Hour}.WithDefaults()
	if err := b.Open(config(t, Server, nil), &Source{Body: src, Closer: src, Mode: Stream, Budget: budget,
		Ctx: context.Background(), RC: http.NewResponseController(w), ArmedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Read(make([]byte, 64))
		done <- err
	}()
	<-src.inRead
	if got := w.calls(); len(got) != 1 || got[0].IsZero() {
		t.Fatalf("deadlines set by the first Read: %v, want one, an hour away", got)
	}
	b.Finish()      // the handler returned
	close(src.gate) // the late Read reaches the end
	if err := <-done; err != io.EOF {
		t.Fatalf("late Read: %v, want io.EOF", err)
	}
	if got := w.calls(); len(got) != 1 {
		t.Errorf("deadlines set: %v; the late end after Finish touched the connection's deadline", got)
	}
}
