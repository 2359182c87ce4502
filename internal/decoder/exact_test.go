package decoder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/limits"
)

// exactConfig returns the Config of opts, charging f when it is not nil.
func exactConfig(t testing.TB, f *limits.InFlight, opts ...Option) Config {
	t.Helper()
	if f != nil {
		opts = append(opts, WithInFlight(f))
	}
	c, err := NewConfig(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// exactOutcome is what one whole read of a body came to: the bytes handed
// out (the chunks joined, then released), the usage, the error, and the
// in-flight budget's InUse when the read returned (before the release).
type exactOutcome struct {
	data  []byte
	usage limits.Usage
	err   error
	held  int64
}

// readExactly reads e with ReadExact; f is the budget e's Config charges, or
// nil.
func readExactly(e Exact, f *limits.InFlight) exactOutcome {
	chunks, u, err := ReadExact(&e)
	o := exactOutcome{usage: u, err: err}
	if f != nil {
		o.held = f.InUse()
	}
	for i := range chunks.Len() {
		o.data = append(o.data, chunks.Chunk(i)...)
	}
	chunks.Release()
	return o
}

// readDecoded reads src with the decoder as a whole identity body of
// length bytes is read when it takes the decoder: ReadAllChunks with the
// length as its size hint.
func readDecoded(src io.Reader, length int64, b limits.Budget, cfg Config, f *limits.InFlight) exactOutcome {
	d, err := New(src, "", b, cfg)
	if err != nil {
		return exactOutcome{err: err}
	}
	d.SetSizeHint(length)
	chunks, err := d.ReadAllChunks()
	o := exactOutcome{usage: d.Usage(), err: err}
	if f != nil {
		o.held = f.InUse()
	}
	for i := range chunks.Len() {
		o.data = append(o.data, chunks.Chunk(i)...)
	}
	chunks.Release()
	d.Close()
	return o
}

// breachDiff describes how two errors differ as breaches (stage, limit,
// observed, encoding, declared, the sentinel they match, the cause they
// wrap), or returns "" when they agree.
func breachDiff(got, want error) string {
	var g, w *limits.Error
	gok, wok := errors.As(got, &g), errors.As(want, &w)
	switch {
	case gok != wok:
		return fmt.Sprintf("got %v, want %v", got, want)
	case !gok:
		// A source's error: the same text (bounded the same way), of the
		// same type, unwrapping to the same cause.
		if (got == nil) != (want == nil) || (got != nil && (got.Error() != want.Error() ||
			fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) || errors.Unwrap(got) != errors.Unwrap(want))) {
			return fmt.Sprintf("got %v, want %v", got, want)
		}
		return ""
	}
	if g.Stage != w.Stage || g.Limit != w.Limit || g.Observed != w.Observed || g.Encoding != w.Encoding ||
		g.Declared != w.Declared || (g.Err == nil) != (w.Err == nil) || (w.Err != nil && !errors.Is(g.Err, w.Err)) {
		return fmt.Sprintf("got %+v, want %+v", *g, *w)
	}
	return ""
}

// eofAfter is a source of data whose Read after the last byte returns
// (0, err) for ever, counting its Reads; it panics after maxReads so that
// a loop that never gives up fails the test instead of hanging it.
type eofAfter struct {
	r     io.Reader
	err   error // nil: (0, nil) for ever, a stall
	reads int
}

const maxReads = 10000

func (s *eofAfter) Read(p []byte) (int, error) {
	if s.reads++; s.reads > maxReads {
		panic("eofAfter: read in an unbounded loop")
	}
	n, err := s.r.Read(p)
	if err == io.EOF {
		return n, s.err
	}
	return n, err
}

// exactSources are identity bodies of declared length exactLen, as
// sources of every behaviour ReadExact must tell apart, with what it must
// make of each. framed sources keep to the declared length (at most that
// many bytes, io.ErrUnexpectedEOF when they end sooner): the decoder must
// come to the same.
const exactLen = 3000

var errPeerScream = errors.New(strings.Repeat("peer\x00says\u202e", 4000))

var exactSources = []struct {
	name     string
	src      func(data []byte) io.Reader // data: exactLen+100 bytes
	want     int                         // bytes handed out, and read (err nil)
	err      error                       // the error, a sentinel for errors.Is
	stage    limits.Stage                // the breach's stage, if any
	observed int64                       // the breach's Observed
	read     int64                       // bytes read off the source (Usage)
	framed   bool
}{
	{name: "its length with io.EOF on the last read",
		src:  func(d []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(d[:exactLen])) },
		want: exactLen, read: exactLen, framed: true},
	{name: "its length, then a separate io.EOF",
		src:  func(d []byte) io.Reader { return bytes.NewReader(d[:exactLen]) },
		want: exactLen, read: exactLen, framed: true},
	{name: "its length a byte at a time",
		src:  func(d []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(d[:exactLen])) },
		want: exactLen, read: exactLen, framed: true},
	{name: "its length in halves of each read",
		src:  func(d []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(d[:exactLen])) },
		want: exactLen, read: exactLen, framed: true},
	{name: "ends sooner with io.EOF (accepted as the decoder accepts it)",
		src:  func(d []byte) io.Reader { return bytes.NewReader(d[:exactLen-100]) },
		want: exactLen - 100, read: exactLen - 100, framed: true},
	{name: "ends at once with io.EOF",
		src:  func(d []byte) io.Reader { return bytes.NewReader(nil) },
		want: 0, read: 0, framed: true},
	{name: "cut short: io.ErrUnexpectedEOF",
		src: func(d []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(d[:1000]), iotest.ErrReader(io.ErrUnexpectedEOF))
		},
		err: io.ErrUnexpectedEOF, stage: limits.StageIntegrity, observed: 1000, read: 1000, framed: true},
	{name: "cut short: io.ErrUnexpectedEOF wrapped, with the last bytes",
		src: func(d []byte) io.Reader {
			return &eofAfter{r: bytes.NewReader(d[:1000]), err: fmt.Errorf("conn: %w", io.ErrUnexpectedEOF)}
		},
		err: io.ErrUnexpectedEOF, stage: limits.StageIntegrity, observed: 1000, read: 1000, framed: true},
	{name: "cut short at once",
		src: func(d []byte) io.Reader { return iotest.ErrReader(io.ErrUnexpectedEOF) },
		err: io.ErrUnexpectedEOF, stage: limits.StageIntegrity, observed: 0, read: 0, framed: true},
	{name: "its length, then io.ErrUnexpectedEOF instead of the end",
		src: func(d []byte) io.Reader {
			return &eofAfter{r: bytes.NewReader(d[:exactLen]), err: io.ErrUnexpectedEOF}
		},
		err: io.ErrUnexpectedEOF, stage: limits.StageIntegrity, observed: exactLen, read: exactLen, framed: true},
	{name: "longer than its length by one byte",
		src: func(d []byte) io.Reader { return bytes.NewReader(d[:exactLen+1]) },
		err: errLonger, stage: limits.StageIntegrity, observed: exactLen + 1, read: exactLen},
	{name: "longer, the extra byte with io.EOF",
		src: func(d []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(d[:exactLen+1])) },
		err: errLonger, stage: limits.StageIntegrity, observed: exactLen + 1, read: exactLen},
	{name: "longer by much",
		src: func(d []byte) io.Reader { return bytes.NewReader(d) },
		err: errLonger, stage: limits.StageIntegrity, observed: exactLen + 1, read: exactLen},
	{name: "stalls: (0, nil) for ever midway",
		src: func(d []byte) io.Reader { return &eofAfter{r: bytes.NewReader(d[:100])} },
		err: io.ErrNoProgress, read: 100, framed: true},
	{name: "stalls: (0, nil) for ever at its length",
		src: func(d []byte) io.Reader { return &eofAfter{r: bytes.NewReader(d[:exactLen])} },
		err: io.ErrNoProgress, read: exactLen, framed: true},
	{name: "stalls at once",
		src: func(d []byte) io.Reader { return &eofAfter{r: bytes.NewReader(nil)} },
		err: io.ErrNoProgress, read: 0, framed: true},
	{name: "count above len(p)",
		src: func(d []byte) io.Reader { return overReader{bytes.NewReader(d), 1} },
		err: errSourceCount, read: 0, framed: true},
	{name: "negative count",
		src: func(d []byte) io.Reader { return overReader{bytes.NewReader(d), -1} },
		err: errSourceCount, read: 0, framed: true},
	{name: "negative count after bytes",
		src: func(d []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(d[:700]), overReader{bytes.NewReader(d), -1 << 20})
		},
		err: errSourceCount, read: 700, framed: true},
	{name: "a source error quoting a long peer text",
		src: func(d []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(d[:10]), iotest.ErrReader(errPeerScream))
		},
		err: errPeerScream, read: 10, framed: true},
	{name: "a plain source error",
		src: func(d []byte) io.Reader {
			return io.MultiReader(bytes.NewReader(d[:10]), iotest.ErrReader(io.ErrClosedPipe))
		},
		err: io.ErrClosedPipe, read: 10, framed: true},
}

// TestReadExactTellsEverySourceApart pins what ReadExact makes of each
// way a source framed by its length can end, or fail to: exactly the
// length (io.EOF with the last bytes or after them) is handed out whole;
// a source that ends sooner with io.EOF is accepted as what it gave, as
// the decoder accepts an identity body; one cut short
// (io.ErrUnexpectedEOF) is a breach of integrity that observed the bytes
// read; one longer than its length is a breach of integrity and hands out
// nothing; a stall ends with io.ErrNoProgress after a bounded number of
// reads (eofAfter panics past maxReads); an invalid count fails rather
// than panics; a source's error reaches the caller with its text bounded.
// Whatever fails holds no bytes and no in-flight charge.
func TestReadExactTellsEverySourceApart(t *testing.T) {
	t.Parallel()
	data := text(exactLen + 100)
	for _, tt := range exactSources {
		t.Run(tt.name, func(t *testing.T) {
			f := limits.NewInFlight(1 << 20)
			var o exactOutcome
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("ReadExact panicked: %v", r)
					}
				}()
				o = readExactly(Exact{Src: tt.src(data), Length: exactLen, Config: exactConfig(t, f)}, f)
			}()
			if want := (limits.Usage{WireBytes: tt.read, DecodedBytes: tt.read}); o.usage != want {
				t.Errorf("Usage = %+v, want %+v", o.usage, want)
			}
			if tt.err == nil {
				if o.err != nil || !bytes.Equal(o.data, data[:tt.want]) {
					t.Fatalf("ReadExact = %d bytes, %v; want the first %d bytes of the body", len(o.data), o.err, tt.want)
				}
				want := chunk.Cap(exactLen)
				if tt.read == 0 {
					want = 0 // no byte came: no chunk was taken
				}
				if o.held != want {
					t.Errorf("InUse() = %d while the chunks are held, want %d", o.held, want)
				}
				return
			}
			if !errors.Is(o.err, tt.err) || o.data != nil {
				t.Fatalf("ReadExact = %d bytes, %v; want no bytes and %v", len(o.data), o.err, tt.err)
			}
			if o.held != 0 {
				t.Errorf("InUse() = %d after a failed read, want 0", o.held)
			}
			var e *limits.Error
			switch {
			case tt.stage == "" && errors.As(o.err, &e):
				t.Errorf("ReadExact = %v, want a source error, not a breach", o.err)
			case tt.stage != "" && (!errors.As(o.err, &e) || e.Stage != tt.stage || e.Observed != tt.observed):
				t.Errorf("ReadExact = %#v, want stage %s observing %d", o.err, tt.stage, tt.observed)
			}
			if n := len(o.err.Error()); n > peertext.MaxErrorText {
				t.Errorf("the error's text is %d bytes long, want at most %d", n, peertext.MaxErrorText)
			}
		})
	}
}

// TestReadExactAgreesWithDecoder: for every source that keeps to its
// length, and at the sizes around each chunk size class, ReadExact hands
// out what the decoder's ReadAllChunks (with the length as its size hint)
// hands out for the same identity body, counts the same usage and fails
// with the same breach: the fast path changes no outcome.
func TestReadExactAgreesWithDecoder(t *testing.T) {
	t.Parallel()
	data := text(chunk.MaxSize + 100)
	type source struct {
		name   string
		length int64
		src    func() io.Reader
	}
	var sources []source
	for _, tt := range exactSources {
		if tt.framed {
			sources = append(sources, source{tt.name, exactLen, func() io.Reader { return tt.src(data) }})
		}
	}
	for _, n := range []int64{1, 511, 512, 513, 4095, 4096, 4097, chunk.MaxSize - 1, chunk.MaxSize} {
		sources = append(sources,
			source{fmt.Sprintf("%d bytes", n), n, func() io.Reader { return bytes.NewReader(data[:n]) }},
			source{fmt.Sprintf("%d bytes, EOF with the last", n), n, func() io.Reader {
				return iotest.DataErrReader(bytes.NewReader(data[:n]))
			}},
			source{fmt.Sprintf("%d bytes cut short one byte early", n), n, func() io.Reader {
				return &eofAfter{r: bytes.NewReader(data[:n-1]), err: io.ErrUnexpectedEOF}
			}})
	}
	b := limits.Budget{}.WithDefaults()
	for _, s := range sources {
		for _, charged := range []bool{false, true} {
			var f *limits.InFlight
			if charged {
				f = limits.NewInFlight(1 << 20)
			}
			cfg := exactConfig(t, f)
			got := readExactly(Exact{Src: s.src(), Length: s.length, Config: cfg}, f)
			want := readDecoded(s.src(), s.length, b, cfg, f)
			name := fmt.Sprintf("%s (in-flight budget %v)", s.name, charged)
			if !bytes.Equal(got.data, want.data) || (got.data == nil) != (want.data == nil) {
				t.Errorf("%s: ReadExact handed out %d bytes, the decoder %d", name, len(got.data), len(want.data))
			}
			if got.usage != want.usage {
				t.Errorf("%s: ReadExact's Usage %+v, the decoder's %+v", name, got.usage, want.usage)
			}
			if d := breachDiff(got.err, want.err); d != "" {
				t.Errorf("%s: ReadExact and the decoder disagree: %s", name, d)
			}
			// A body that ended with no bytes at all still holds its chunk
			// (ReadExact charged it before the first Read); the decoder's
			// first chunk comes with the first byte.
			if got.held != want.held && len(want.data) > 0 {
				t.Errorf("%s: InUse() = %d after ReadExact, %d after the decoder", name, got.held, want.held)
			}
			if charged && f.InUse() != 0 {
				t.Errorf("%s: InUse() = %d once both released, want 0", name, f.InUse())
			}
		}
	}
}

// chargeSpy is a source that records the in-flight budget's InUse at
// each Read, with the bytes it had given before it.
type chargeSpy struct {
	r     io.Reader
	f     *limits.InFlight
	reads int
	given int64
	seen  []seen
}

type seen struct{ given, inUse int64 }

func (s *chargeSpy) Read(p []byte) (int, error) {
	s.reads++
	s.seen = append(s.seen, seen{s.given, s.f.InUse()})
	n, err := s.r.Read(p)
	s.given += int64(n)
	return n, err
}

// TestReadExactChargesChunkAfterItsFirstBytes pins the in-flight charge of
// an exact body: nothing until its first 512 bytes came (the whole body, if
// shorter: a peer that sends headers, or fewer bytes, holds nothing), then
// the capacity of the one chunk it is read into (never the bytes as they
// come), so that a peer holds at most EarnRatio bytes per byte it sent; the
// charge rides with the chunks until they are released and is given back on
// every failure. Sources give 100 bytes per Read. Sabotage: reserving at the
// first byte, as it once did, fails the rows longer than 100 bytes; reserving
// before the first Read fails every row.
func TestReadExactChargesChunkAfterItsFirstBytes(t *testing.T) {
	t.Parallel()
	data := text(chunk.MaxSize + 1)
	for _, tt := range []struct {
		length int64
		charge int64
	}{
		{1, 512}, {511, 512}, {512, 512}, {513, 1024}, {4096, 4096}, {4097, 8192},
		{chunk.MaxSize - 1, chunk.MaxSize}, {chunk.MaxSize, chunk.MaxSize},
	} {
		first := min(tt.length, chunk.MinSize)
		for _, tail := range []struct {
			name string
			src  func() io.Reader
			ok   bool
		}{
			{"whole", func() io.Reader { return bytes.NewReader(data[:tt.length]) }, true},
			{"cut short", func() io.Reader {
				return &eofAfter{r: bytes.NewReader(data[:tt.length-1]), err: io.ErrUnexpectedEOF}
			}, false},
			{"longer", func() io.Reader { return bytes.NewReader(data[:tt.length+1]) }, false},
			{"source error", func() io.Reader {
				return io.MultiReader(bytes.NewReader(data[:tt.length/2]), iotest.ErrReader(io.ErrClosedPipe))
			}, false},
		} {
			f := limits.NewInFlight(1 << 20)
			spy := &chargeSpy{r: &pieces{r: tail.src(), n: 100}, f: f}
			chunks, _, err := ReadExact(&Exact{Src: spy, Length: tt.length, Config: exactConfig(t, f)})
			name := fmt.Sprintf("%d bytes, %s", tt.length, tail.name)
			for _, s := range spy.seen {
				want := int64(0)
				if s.given >= first {
					want = tt.charge
				}
				if s.inUse != want {
					t.Errorf("%s: InUse() = %d at a Read after %d bytes, want %d", name, s.inUse, s.given, want)
				}
			}
			if (err == nil) != tail.ok {
				t.Fatalf("%s: ReadExact = %v", name, err)
			}
			held := int64(0)
			if tail.ok {
				held = tt.charge
			}
			if got := f.InUse(); got != held {
				t.Errorf("%s: InUse() = %d once ReadExact returned, want %d", name, got, held)
			}
			chunks.Release()
			peak := int64(0)
			if spy.given > 0 {
				peak = tt.charge // a body that failed within its first bytes took its chunk too
			}
			if got := f.InUse(); got != 0 || f.Peak() != peak {
				t.Errorf("%s: InUse() = %d, Peak() = %d after Release, want 0, %d", name, got, f.Peak(), peak)
			}
		}
	}
}

// pieces gives at most n bytes per Read.
type pieces struct {
	r io.Reader
	n int
}

func (p *pieces) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.n)]) }

// TestReadExactNoRoomFailsAsDecoderDoes: a body that finds no room in the
// in-flight budget (Wait 0) after its first bytes is refused, with the breach
// the decoder gives for the same body (stage inflight, the capacity as
// Limit, the chunk's capacity as Observed, encoding "identity", never
// declared: the length was within the budget), matching limits.ErrBusy,
// having read its first 512 bytes (the whole body, if shorter); it holds
// nothing. Where the budget has room
// for more than the chunk, the decoder's first reservation also takes the
// body's bound (see startBody) and reports that as Observed; ReadExact
// reserves, and reports, the chunk alone.
func TestReadExactNoRoomFailsAsDecoderDoes(t *testing.T) {
	t.Parallel()
	data := text(8192)
	for _, tt := range []struct {
		name   string
		cap    int64
		others int64 // held by another body
		length int64
		same   bool // the decoder reserves the chunk alone too
	}{
		{"chunk larger than the budget", 4000, 0, 3000, true},
		{"chunk one byte over the budget", 4095, 0, 4096, true},
		{"chunk one byte over, rounded up", 8191, 0, 4097, true},
		{"budget busy by one byte", 4096, 1, 4096, true},
		{"budget busy, small body", 512, 1, 1, true},
		{"budget full, room for more than the chunk", 4096, 4096, 1, false},
		{"budget busy, room for more than the chunk", 1 << 20, 1<<20 - 4095, 4096, false},
	} {
		f := limits.NewInFlight(tt.cap)
		other := inflight.NewHold(inflight.Of(f))
		if err := other.Grow(tt.others); err != nil {
			t.Fatal(err)
		}
		cfg := exactConfig(t, f)
		spy := &chargeSpy{r: bytes.NewReader(data[:tt.length]), f: f}
		got := readExactly(Exact{Src: spy, Length: tt.length, Config: cfg}, f)
		want := readDecoded(bytes.NewReader(data[:tt.length]), tt.length, limits.Budget{}.WithDefaults(), cfg, f)
		var e *limits.Error
		if !errors.As(got.err, &e) || e.Stage != limits.StageInFlight || !errors.Is(got.err, limits.ErrBusy) ||
			e.Limit != tt.cap || e.Observed != chunk.Cap(tt.length) || e.Encoding != "identity" || e.Declared {
			t.Errorf("%s: ReadExact = %#v, want stage inflight, limit %d, observed %d, encoding identity", tt.name, got.err, tt.cap, chunk.Cap(tt.length))
		}
		if d := breachDiff(got.err, want.err); d != "" && tt.same {
			t.Errorf("%s: ReadExact and the decoder disagree: %s", tt.name, d)
		}
		first := min(tt.length, chunk.MinSize)
		if spy.reads != 1 || got.usage != (limits.Usage{WireBytes: first, DecodedBytes: first}) || got.data != nil {
			t.Errorf("%s: the source was read %d times, Usage %+v, %d bytes, want its first %d bytes read and nothing handed out", tt.name, spy.reads, got.usage, len(got.data), first)
		}
		if got.held != tt.others {
			t.Errorf("%s: InUse() = %d after the refusal, want %d (the other body's)", tt.name, got.held, tt.others)
		}
		other.Release()
	}
}

// TestReadExactWaitEndedByContext: a body that waits for room (Wait < 0:
// until its context ends; Wait > 0: at most that long) and does not get
// it fails with stage inflight wrapping the context's error, as the
// decoder's SetInFlightWait does, having read its first 512 bytes alone
// and holding nothing;
// one whose room comes while it waits reads its body.
func TestReadExactWaitEndedByContext(t *testing.T) {
	t.Parallel()
	data := text(4096)
	f := limits.NewInFlight(4096)
	other := inflight.NewHold(inflight.Of(f))
	if err := other.Grow(1); err != nil {
		t.Fatal(err)
	}
	cfg := exactConfig(t, f)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		wait time.Duration
		want error
	}{
		{"context cancelled", cancelled, -1, context.Canceled},
		{"wait elapsed", context.Background(), 1, context.DeadlineExceeded},
	} {
		spy := &chargeSpy{r: bytes.NewReader(data), f: f}
		got := readExactly(Exact{Src: spy, Length: 4096, Config: cfg, Ctx: tt.ctx, Wait: tt.wait}, f)
		var e *limits.Error
		if !errors.As(got.err, &e) || e.Stage != limits.StageInFlight || !errors.Is(got.err, tt.want) {
			t.Errorf("%s: ReadExact = %v, want stage inflight wrapping %v", tt.name, got.err, tt.want)
		}
		d, _ := New(bytes.NewReader(data), "", limits.Budget{}.WithDefaults(), cfg)
		d.SetSizeHint(4096)
		d.SetInFlightWait(tt.ctx, tt.wait)
		_, derr := d.ReadAllChunks()
		d.Close()
		if diff := breachDiff(got.err, derr); diff != "" {
			t.Errorf("%s: ReadExact and the decoder disagree: %s", tt.name, diff)
		}
		if spy.reads != 1 || got.held != 1 {
			t.Errorf("%s: source read %d times, InUse() = %d; want once, 1 (the other body's)", tt.name, spy.reads, got.held)
		}
	}
	// Room comes while it waits: the other body's release wakes it.
	waiting := make(chan struct{})
	spy := &chargeSpy{r: bytes.NewReader(data), f: f}
	done := make(chan exactOutcome, 1)
	ctx := &doneWatch{Context: context.Background(), asked: waiting}
	go func() { done <- readExactly(Exact{Src: spy, Length: 4096, Config: cfg, Ctx: ctx, Wait: -1}, f) }()
	select {
	case <-waiting: // the wait has begun: it watches its context
	case got := <-done:
		t.Fatalf("ReadExact returned without waiting: %d bytes, %v", len(got.data), got.err)
	}
	other.Release()
	if got := <-done; got.err != nil || !bytes.Equal(got.data, data) || got.held != 4096 {
		t.Errorf("after the wait: ReadExact = %d bytes, %v, InUse() %d; want the body, charged 4096", len(got.data), got.err, got.held)
	}
	if f.InUse() != 0 {
		t.Errorf("InUse() = %d after the release, want 0", f.InUse())
	}
}

// doneWatch is a context that tells when someone starts watching it.
type doneWatch struct {
	context.Context
	asked chan struct{}
	once  bool
}

func (c *doneWatch) Done() <-chan struct{} {
	if !c.once {
		c.once = true
		close(c.asked)
	}
	return c.Context.Done()
}

// TestFitsBoundary walks Fits, the door to ReadExact, over its edges: a
// declared length from 1 to the smaller of one chunk, MaxWireBytes and
// MaxDecodedBytes (each at limit-1, limit, limit+1) fits; zero, negative,
// math.MaxInt64 do not; nor does any length once a character limit asks
// for a count or WithRequireChecksum refuses identity.
func TestFitsBoundary(t *testing.T) {
	t.Parallel()
	plain := exactConfig(t, nil)
	charged := exactConfig(t, limits.NewInFlight(1<<20))
	checksum := exactConfig(t, nil, WithRequireChecksum())
	members := exactConfig(t, nil, WithMaxMembers(5))
	def := limits.Budget{}.WithDefaults()
	wire := func(n int64) limits.Budget { return limits.Budget{MaxWireBytes: n}.WithDefaults() }
	decoded := func(n int64) limits.Budget { return limits.Budget{MaxDecodedBytes: n}.WithDefaults() }
	for _, tt := range []struct {
		n    int64
		b    limits.Budget
		c    *Config
		want bool
	}{
		{0, def, &plain, false},
		{-1, def, &plain, false},
		{math.MinInt64, def, &plain, false},
		{1, def, &plain, true},
		{chunk.MaxSize - 1, def, &plain, true},
		{chunk.MaxSize, def, &plain, true},
		{chunk.MaxSize + 1, def, &plain, false},
		{math.MaxInt64, def, &plain, false},
		{999, wire(1000), &plain, true},
		{1000, wire(1000), &plain, true},
		{1001, wire(1000), &plain, false},
		{1, wire(1), &plain, true},
		{2, wire(1), &plain, false},
		{999, decoded(1000), &plain, true},
		{1000, decoded(1000), &plain, true},
		{1001, decoded(1000), &plain, false},
		{1000, limits.Budget{MaxWireBytes: 1000, MaxDecodedBytes: 999}.WithDefaults(), &plain, false},
		{1000, limits.Budget{MaxWireBytes: 999, MaxDecodedBytes: 1000}.WithDefaults(), &plain, false},
		{chunk.MaxSize, wire(math.MaxInt64), &plain, true},
		{chunk.MaxSize + 1, wire(math.MaxInt64), &plain, false},
		{math.MaxInt64, limits.Budget{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: math.MaxInt64}, &plain, false},
		{1, limits.Budget{MaxDecodedRunes: 1}.WithDefaults(), &plain, false},
		{1, limits.Budget{MaxDecodedRunes: math.MaxInt64}.WithDefaults(), &plain, false},
		{1, limits.Budget{MaxRatio: 1, Timeout: 1}.WithDefaults(), &plain, true},
		{1, def, &checksum, false},
		{chunk.MaxSize, def, &checksum, false},
		{1, def, &charged, true},
		{1, def, &members, true},
	} {
		if got := Fits(tt.n, tt.b, tt.c); got != tt.want {
			t.Errorf("Fits(%d, wire %d decoded %d runes %d, checksum %v) = %v, want %v",
				tt.n, tt.b.MaxWireBytes, tt.b.MaxDecodedBytes, tt.b.MaxDecodedRunes, tt.c.requireChecksum, got, tt.want)
		}
	}
}

// TestReadExactPanicGivesBackCharge (trap: a charge owned by no one after
// a panic): a source whose Read panics midway leaves nothing charged to the
// in-flight budget once the panic has left ReadExact; the chunk was
// charged when it did.
func TestReadExactPanicGivesBackCharge(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(1 << 20)
	var charged int64 = -1
	src := io.MultiReader(bytes.NewReader(text(600)), readerFunc(func([]byte) (int, error) {
		charged = f.InUse()
		panic("source broke")
	}))
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("ReadExact did not panic")
			}
		}()
		ReadExact(&Exact{Src: src, Length: 4096, Config: exactConfig(t, f)})
	}()
	if charged != 4096 || f.InUse() != 0 {
		t.Errorf("InUse() = %d when the source panicked, %d after; want 4096, 0", charged, f.InUse())
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
