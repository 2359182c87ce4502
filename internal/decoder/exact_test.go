package decoder

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/boundhttp/boundhttp/internal/chunk"
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
	chunks, u, err := ReadExact(e)
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

var peerScream = errors.New(strings.Repeat("peer\x00says\u202e", 4000))

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
			return io.MultiReader(bytes.NewReader(d[:10]), iotest.ErrReader(peerScream))
		},
		err: peerScream, read: 10, framed: true},
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
				if want := chunkCap(exactLen); o.held != want {
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
