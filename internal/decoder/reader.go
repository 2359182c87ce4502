package decoder

import (
	"errors"
	"io"
	"time"

	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/internal/sat"
	"github.com/boundhttp/boundhttp/limits"
)

// ErrClosed is returned by [Reader.Read] after [Reader.Close].
var ErrClosed = errors.New("decoding: read after Close")

// A Reader is the decoded body of one HTTP message, charged against a
// [limits.Budget]. It reads at most MaxWireBytes+1 bytes from its source and
// returns at most MaxDecodedBytes bytes in total.
//
// A breach of the budget is returned as a [*limits.Error] and is sticky:
// every later Read returns the same error. Bytes returned before io.EOF are
// tentative; io.EOF is returned only after every coding ended cleanly.
// Errors of the source pass through as they are; a source that returns no
// bytes and no error 100 times in a row fails with io.ErrNoProgress, as
// bufio does, so that no loop spins on it forever; one that returns a count
// outside [0, len(p)] fails with an error too, instead of a panic.
//
// A Reader is not safe for concurrent use, and that includes Close: Close
// returns the decoders to their pools, so it must not run while a Read is
// in progress. To abort a Read blocked in the source, close the source
// itself from another goroutine (where the source allows that, as net/http
// bodies and net.Conn do), wait for Read to return, then call Close; the
// caller that wraps a Reader for concurrent Close (as boundhttp's bodies
// do) must give it that order. The package itself starts no goroutine and
// never touches a Reader or its source from another one.
type Reader struct {
	b      limits.Budget // defaults applied
	cfg    Config
	src    io.Reader
	wire   wireReader
	layers []layer // layers[0] reads the wire; the last one is the output
	top    *layer

	start    time.Time
	sizeHint int64         // expected decoded size, for ReadAllChunks
	runes    int64         // characters returned, when MaxDecodedRunes is set
	fault    *limits.Error // first budget breach, shared by all layers
	srcErr   error         // a read error of the source that is not ours
	err      error         // sticky result of Read
	closed   bool
	release  bool // whether the decoders were returned to their pools
	marked   bool // the end must be marked by the coding: no bytes is a cut (see RequireMarkedEnd)
	fl       inflightState
}

// NewReader returns a Reader of the body r, encoded with the codings of the
// Content-Encoding value contentEncoding, charged against b.
//
// It fails without reading r when b or an option is invalid, when the list
// has more than b.MaxLayers codings ([limits.StageLayers]) or when a coding
// is not supported ([limits.StageEncoding]). The error's Encoding is then
// one coding (the first beyond MaxLayers, or the first unsupported one),
// cut to [limits.MaxEcho] bytes: a peer's header never reaches an error
// whole.
func NewReader(r io.Reader, contentEncoding string, b limits.Budget, opts ...Option) (*Reader, error) {
	if err := b.Validate(); err != nil {
		return nil, err // the budget's error first, as always
	}
	cfg, err := NewConfig(opts)
	if err != nil {
		return nil, err
	}
	return New(r, contentEncoding, b, cfg)
}

// New is [NewReader] with options already applied by [NewConfig].
func New(r io.Reader, contentEncoding string, b limits.Budget, cfg Config) (*Reader, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	d := new(Reader)
	if err := d.Reset(r, contentEncoding, b, cfg); err != nil {
		return nil, err
	}
	return d, nil
}

// Reset makes d a new Reader of r, as [New] does, reusing d's memory; b
// must be valid (the caller validated it). It fails only on the codings:
// too many ([limits.StageLayers]) or one not supported
// ([limits.StageEncoding]). d must be new, or released by Close, Done or
// Recycle; on error d is unusable until the next successful Reset.
func (d *Reader) Reset(r io.Reader, contentEncoding string, b limits.Budget, cfg Config) *limits.Error {
	b = b.WithDefaults()
	var buf [2]string // the codings of all but unusual headers, on the stack
	codings := appendCodings(buf[:0], contentEncoding)
	if len(codings) > b.MaxLayers {
		// Name the first coding beyond the limit, never the whole header.
		return &limits.Error{Stage: limits.StageLayers, Limit: int64(b.MaxLayers),
			Observed: int64(len(codings)), Declared: true, Encoding: peertext.Cut(codings[b.MaxLayers])}
	}
	for _, c := range codings {
		if !IsSupported(c) {
			return &limits.Error{Stage: limits.StageEncoding, Encoding: peertext.Cut(c)}
		}
	}
	if len(codings) == 0 {
		codings = append(codings, "identity")
	}
	layers := d.layers
	*d = Reader{b: b, cfg: cfg, src: r}
	d.wire = wireReader{d: d, src: r, max: b.MaxWireBytes}
	d.fl.hold = inflight.NewHold(cfg.pool)
	if cap(layers) >= len(codings) {
		d.layers = layers[:len(codings)]
		clear(d.layers)
	} else {
		d.layers = make([]layer, len(codings))
	}
	var in io.Reader = &d.wire
	for i := range codings {
		// The last-applied coding is removed first.
		name := codings[len(codings)-1-i]
		l := &d.layers[i]
		l.d, l.name, l.max, l.src = d, name, b.MaxDecodedBytes, in
		if i == 0 {
			l.inCount = &d.wire.n
		} else {
			l.inCount = &d.layers[i-1].out
		}
		in = l
	}
	d.top = &d.layers[len(d.layers)-1]
	return nil
}

// Read reads decoded bytes into p. See [Reader] for the guarantees.
func (d *Reader) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err // sticky; set to ErrClosed by Close
	}
	if d.b.Timeout > 0 {
		if d.start.IsZero() {
			d.start = time.Now()
		} else if el := time.Since(d.start); el > d.b.Timeout {
			d.err = d.timeoutError(el)
			return 0, d.err
		}
	}
	if d.b.MaxDecodedRunes > 0 {
		// Each character takes at least one byte, so one byte past the
		// remaining characters would do to detect a breach; but continuation
		// bytes count as no character, and near the cap that would read them
		// one per Read. Ask for at least runePiece bytes: a piece that holds
		// a character past the cap is not returned at all (see below), and
		// the breach reports Limit+1, the character that tripped it.
		p = clip(p, max(d.b.MaxDecodedRunes-d.runes, runePiece-1))
	}
	n, err := d.top.Read(p)
	if err == io.EOF && d.marked && d.wire.n == 0 {
		// Every coding takes bytes to mark an end: a body with none ended
		// where its source did, which proves nothing.
		d.fail(&limits.Error{Stage: limits.StageIntegrity, Encoding: d.top.name, Err: errUnmarkedEnd})
		n, err = 0, d.fault
	}
	if d.b.MaxDecodedRunes > 0 && n > 0 {
		// No bytes of a Read that passed the cap are returned, so the
		// caller never holds more than MaxDecodedRunes characters.
		if c := countRunes(p[:n]); c > d.b.MaxDecodedRunes-d.runes {
			d.runes = d.b.MaxDecodedRunes
			d.fail(&limits.Error{Stage: limits.StageRunes, Limit: d.b.MaxDecodedRunes,
				Observed: sat.Add(d.runes, 1), Encoding: d.top.name})
			err, n = d.fault, 0
		} else {
			d.runes += c
		}
	}
	// The last bytes may come with io.EOF (flate does so): check them too,
	// so that they are judged like every other read (the running ratio; see
	// limits.RatioGrace).
	if d.b.MaxRatio > 0 && d.top.out > limits.RatioGrace && (err == nil || err == io.EOF) {
		if float64(d.top.out) > d.b.MaxRatio*float64(d.wire.n) {
			d.fail(&limits.Error{Stage: limits.StageRatio, Limit: ratioLimit(d.b.MaxRatio),
				Observed: d.top.out / max(d.wire.n, 1), Encoding: d.top.name})
			err = d.fault
			n = 0
		}
	}
	if d.b.Timeout > 0 && (err == nil || err == io.EOF) {
		// Also after the Read: a source that blocked past the deadline and
		// then returned the end (or data with io.EOF) is late all the same.
		if el := time.Since(d.start); el > d.b.Timeout {
			d.fail(d.timeoutError(el))
			n, err = 0, d.fault
		}
	}
	if err != nil {
		if err != io.EOF && d.fault != nil {
			err = d.fault
		}
		d.err = err
	}
	return n, err
}

func (d *Reader) timeoutError(el time.Duration) *limits.Error {
	return &limits.Error{Stage: limits.StageTimeout, Limit: d.b.Timeout.Milliseconds(),
		Observed: el.Milliseconds()}
}

// Usage reports the wire bytes read from the source and the decoded bytes
// returned so far. WireBytes may exceed what the body needed by the one byte
// read to detect a breach.
func (d *Reader) Usage() limits.Usage {
	return limits.Usage{WireBytes: d.wire.n, DecodedBytes: d.top.out}
}

// EndMarked reports whether the body's codings mark its end themselves, so
// that a source cut anywhere fails to verify: the coding read off the wire
// (the last one applied) is not identity, and when it is gzip or zstd it
// admits one member or frame only (the default of [WithMaxMembers]). An
// identity body ends wherever its source ends, and so does a body of several
// members or frames when the source is cut between two of them: for those,
// the end is only as trustworthy as the framing that carried the body.
func (d *Reader) EndMarked() bool {
	switch d.layers[0].name {
	case "identity":
		return false
	case "gzip", "zstd":
		return d.cfg.maxMembers == 1
	}
	return true
}

// RequireMarkedEnd makes a body whose codings mark its end (see
// EndMarked) fail with a breach of integrity when its source ends without
// a byte: the codecs take a body of no bytes for an empty one, as a framing
// that proved the end allows, but where the coding is the only proof (a
// close-delimited HTTP/1.x body) no bytes proves nothing. Call it before the
// first Read.
func (d *Reader) RequireMarkedEnd() { d.marked = true }

// errUnmarkedEnd is the breach of a body whose end only its coding could
// prove, and that had no bytes.
var errUnmarkedEnd = errors.New("decoding: the body ended before its coding began, and nothing else marks its end")

// Budget returns the budget the Reader enforces, with defaults applied.
func (d *Reader) Budget() limits.Budget { return d.b }

// Close returns the decoders to their pools and closes the source if it is
// an [io.Closer]. Read after Close returns [ErrClosed] (or the error that
// ended the body earlier). Close is idempotent; only the first call closes the
// source. It must not be called while a Read is in progress (see [Reader]).
func (d *Reader) Close() error {
	if d.closed {
		return nil
	}
	d.releaseDecoders()
	d.dropChunks()
	d.closed = true
	if c, ok := d.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// releaseDecoders returns the codecs to their pools. Afterwards d.err is
// never nil, so Read does not reach the layers again.
func (d *Reader) releaseDecoders() {
	if d.release {
		return
	}
	d.release = true
	for i := range d.layers {
		if c := d.layers[i].dec; c != nil {
			c.release()
			d.layers[i].dec = nil
		}
	}
	d.dropDecoders()
	if d.err == nil {
		d.err = ErrClosed
	}
}

// fail records the first breach; later ones are ignored.
func (d *Reader) fail(e *limits.Error) {
	if d.fault == nil {
		d.fault = e
	}
}

// maxEmptyReads is how many reads in a row may return no bytes and no
// error before the source is given up on, as bufio does: io.Reader
// discourages (0, nil), and a source that returns it forever would
// otherwise make Read and ReadAll loop forever.
const maxEmptyReads = 100

// errSourceCount reports a source whose Read returned a count outside
// [0, len(p)], which the io.Reader contract forbids.
var errSourceCount = errors.New("decoding: source returned an invalid byte count")

// wireReader counts the bytes read from the source and stops at
// max+1.
type wireReader struct {
	d     *Reader
	src   io.Reader
	n     int64
	max   int64
	empty int // consecutive reads that returned (0, nil)
}

func (w *wireReader) Read(p []byte) (int, error) {
	if w.d.fault != nil {
		return 0, w.d.fault
	}
	p = clip(p, w.max-w.n)
	var n int
	var err error
	ok := false
	if w.d.fl.ahead.on { // bytes read ahead come first (see readAheadTo)
		n, err, ok = w.d.fl.ahead.next(p)
	}
	if !ok {
		n, err = w.src.Read(p)
	}
	if n < 0 || n > len(p) {
		// Neither the bytes nor the count can be trusted: a negative count
		// would also wind the wire count back under its limit.
		n, err = 0, errSourceCount
	}
	if n == 0 && err == nil && len(p) > 0 {
		if w.empty++; w.empty >= maxEmptyReads {
			err = io.ErrNoProgress
		}
	} else {
		w.empty = 0
	}
	w.n += int64(n)
	if w.n > w.max {
		w.d.fail(&limits.Error{Stage: limits.StageWire, Limit: w.max, Observed: w.n})
		return 0, w.d.fault
	}
	switch {
	case err == nil, err == io.EOF:
	case cutShort(err, w.n) != nil:
		w.d.fail(cutShort(err, w.n))
		err = w.d.fault
	default:
		// The source's error may quote a peer (an HTTP/2 field name,
		// GOAWAY debug data): from here on its text is bounded.
		err = peertext.Bound(err)
		if w.d.srcErr == nil {
			w.d.srcErr = err
		}
	}
	return n, err
}

// cutShort returns the breach of a source whose error says that the
// connection ended before its declared length, n bytes in, or nil.
func cutShort(err error, n int64) *limits.Error {
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return &limits.Error{Stage: limits.StageIntegrity, Observed: n, Err: io.ErrUnexpectedEOF}
}

// A layer removes one coding and holds its output to max bytes.
type layer struct {
	d       *Reader
	name    string
	src     io.Reader
	inCount *int64 // bytes the source has produced, for error reports
	dec     codec
	out     int64
	max     int64
	// The codecs that live in their layer instead of an allocation of
	// their own: the layer is the Reader's, which owns them.
	ident identity
	gz    gzipCodec
}

// A codec decodes one coding. Its Read returns io.EOF only after the stream
// verified complete, trailing bytes included.
type codec interface {
	io.Reader
	// release returns the codec to its pool; the codec is not used again.
	release()
}

func (l *layer) Read(p []byte) (int, error) {
	d := l.d
	if d.fault != nil {
		return 0, d.fault
	}
	if l.dec == nil {
		dec, err := newCodec(l, d)
		if err != nil {
			return 0, l.fail(err)
		}
		l.dec = dec
	}
	// Ask for at most one byte past the limit.
	p = clip(p, l.max-l.out)
	n, err := l.dec.Read(p)
	l.out += int64(n)
	if l.out > l.max {
		d.fail(&limits.Error{Stage: limits.StageDecoded, Limit: l.max, Observed: l.out, Encoding: l.name})
		return 0, d.fault
	}
	if err != nil && err != io.EOF {
		return n, l.fail(err)
	}
	return n, err
}

// fail maps a decoder error to the error the Reader reports: a recorded
// breach first, then a source error, then an integrity failure of this
// layer.
func (l *layer) fail(err error) error {
	d := l.d
	if d.fault != nil {
		return d.fault
	}
	if d.srcErr != nil {
		return d.srcErr
	}
	// Every budget breach was recorded in d.fault where it was detected, so
	// what is left is the coding's own failure.
	d.fail(&limits.Error{Stage: limits.StageIntegrity, Encoding: l.name, Observed: *l.inCount, Err: err})
	return d.fault
}

// runePiece is the fewest bytes Read asks its decoder for under
// MaxDecodedRunes: enough that a run of continuation bytes (no characters)
// near the cap costs one Read per piece, not one per byte.
const runePiece = 4 << 10

// countRunes counts the UTF-8 sequence starts in p: the bytes that are not
// continuation bytes.
func countRunes(p []byte) int64 {
	var n int64
	for _, c := range p {
		if c&0xc0 != 0x80 {
			n++
		}
	}
	return n
}
