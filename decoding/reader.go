package decoding

import (
	"io"

	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// ErrClosed is returned by [Reader.Read] after [Reader.Close].
var ErrClosed = decoder.ErrClosed

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
// bodies and net.Conn do), wait for Read to return, then call Close. The
// package itself starts no goroutine and never touches a Reader or its
// source from another one.
type Reader struct {
	d decoder.Reader
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
	cfg, err := config(b, opts)
	if err != nil {
		return nil, err
	}
	d := new(Reader)
	if err := d.d.Reset(r, contentEncoding, b, cfg); err != nil {
		return nil, err
	}
	return d, nil
}

// config validates b and applies opts, reporting an invalid budget before
// an invalid option.
func config(b limits.Budget, opts []Option) (decoder.Config, error) {
	if err := b.Validate(); err != nil {
		return decoder.Config{}, err
	}
	return decoder.NewConfig(opts)
}

// Read reads decoded bytes into p. See [Reader] for the guarantees.
func (d *Reader) Read(p []byte) (int, error) { return d.d.Read(p) }

// Usage reports the wire bytes read from the source and the decoded bytes
// returned so far. WireBytes may exceed what the body needed by the one byte
// read to detect a breach.
func (d *Reader) Usage() limits.Usage { return d.d.Usage() }

// Budget returns the budget the Reader enforces, with defaults applied.
func (d *Reader) Budget() limits.Budget { return d.d.Budget() }

// Close returns the decoders to their pools, gives back what the body holds
// of an in-flight budget ([WithInFlight]) and closes the source if it is an
// [io.Closer]. Read after Close returns [ErrClosed] (or the error that ended
// the body earlier). Close is idempotent; only the first call closes the
// source. It must not be called while a Read is in progress (see [Reader]).
func (d *Reader) Close() error { return d.d.Close() }

// ReadAll reads the rest of d to its verified end, as the package-level
// [ReadAll] does, and returns the decoders to their pools. It does not close
// the source.
func (d *Reader) ReadAll() ([]byte, error) { return d.d.ReadAll() }

// ReadAll reads, decodes and verifies the whole body r, encoded with the
// codings of contentEncoding, against b. It returns the complete body, or an
// error and no bytes: never a prefix.
//
// Memory: the body is read into pooled chunks of 512 B to 64 KiB whose
// capacity exceeds the bytes read by less than one chunk, then joined once
// into a slice of exactly the body's size; whatever a header declares, no
// allocation is larger than the bytes decoded plus one chunk. ReadAll does
// not close r.
func ReadAll(r io.Reader, contentEncoding string, b limits.Budget, opts ...Option) ([]byte, error) {
	cfg, err := config(b, opts)
	if err != nil {
		return nil, err
	}
	var d decoder.Reader
	if err := d.Reset(r, contentEncoding, b, cfg); err != nil {
		return nil, err
	}
	return d.ReadAll()
}
