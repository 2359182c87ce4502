package limits

import (
	"fmt"
	"math"
	"time"
)

// Defaults applied to zero fields of a [Budget].
const (
	// DefaultMaxWireBytes is the default of [Budget.MaxWireBytes]: 4 MiB,
	// the request cap the MCP SDKs converged on.
	DefaultMaxWireBytes int64 = 4 << 20
	// DefaultMaxDecodedBytes is the default of [Budget.MaxDecodedBytes]:
	// 4 MiB, so that nobody gets more room by arriving compressed.
	DefaultMaxDecodedBytes int64 = 4 << 20
	// DefaultMaxLayers is the default of [Budget.MaxLayers]: real servers
	// send one coding; two leaves room for "gzip, br" style proxies.
	DefaultMaxLayers = 2
	// DefaultMaxWindowBytes is the default of [Budget.MaxWindowBytes]: 8 MiB,
	// the zstd window cap RFC 9659 sets for HTTP content-coding.
	DefaultMaxWindowBytes int64 = 8 << 20
)

// A Budget is the set of hard limits one HTTP body is charged against, on
// the client ([boundhttp.Transport]) and on the server
// ([boundhttp.Middleware]) alike.
//
// The zero value is the default budget. A zero field takes its documented
// default; a negative field is invalid and makes [Budget.Validate] fail.
// Nothing is unlimited. A Budget is a plain value, safe to copy and to share
// between goroutines.
//
// Every non-negative value is accepted, up to math.MaxInt64 (and
// math.MaxFloat64 for MaxRatio): the arithmetic on limits saturates, so
// "effectively unlimited" written as math.MaxInt64 gives a working reader
// whose only bound is then the body itself. Such a budget bounds nothing;
// prefer a real number.
type Budget struct {
	// MaxWireBytes caps the body bytes read off the connection, after
	// transfer framing (chunked, HTTP/2 DATA) is removed and before any
	// content-coding is removed. A declared Content-Length above it is
	// rejected before the first body byte is read; a body that is longer than
	// declared, or has no declared length, fails when byte MaxWireBytes+1
	// arrives. It does not count headers, trailers or framing overhead.
	// Unit: bytes. Zero means [DefaultMaxWireBytes].
	MaxWireBytes int64

	// MaxDecodedBytes caps the bytes handed to the caller after the last
	// content-coding is removed, summed over every gzip member, zstd frame
	// and read of the body. Each intermediate layer of a multi-coded body
	// ("gzip, br") is held to the same number, so no layer can expand
	// without bound. For an identity body it counts the same bytes as
	// MaxWireBytes. It does not cover decoder working memory (see
	// MaxWindowBytes). Unit: bytes. Zero means [DefaultMaxDecodedBytes].
	MaxDecodedBytes int64

	// MaxLayers caps the number of content-codings in the Content-Encoding
	// list ("identity" entries do not count). It is checked before any byte
	// is decoded. Unit: codings. Zero means [DefaultMaxLayers].
	MaxLayers int

	// MaxWindowBytes caps the decoder history a stream declares: the zstd
	// frame window, and the window of large-window brotli (RFC 9841).
	// Standard brotli windows are at most 16 MiB and are always allowed. A
	// larger declaration is rejected before the window is allocated. It
	// bounds decoder memory, not output. A value above the largest window a
	// stream can declare (about 3.75 TB for zstd) allows every window and
	// is otherwise harmless. Unit: bytes. Zero means
	// [DefaultMaxWindowBytes].
	MaxWindowBytes int64

	// MaxRatio caps decoded bytes divided by wire bytes. It is checked once
	// [RatioGrace] decoded bytes exist, as an early warning against bombs; it
	// is never the only guard (MaxDecodedBytes always applies). Unit: a
	// dimensionless factor. Zero means off; a negative value, NaN or
	// infinity is invalid, as is a positive value below 1.
	MaxRatio float64

	// MaxDecodedRunes caps the characters of the decoded body, for text
	// handed to agents whose tool-output ceilings are stated in characters
	// or tokens. A character is a UTF-8 sequence: every byte that is not a
	// continuation byte (10xxxxxx) starts one, so the count is exact across
	// reads and invalid bytes count as one character each (stray
	// continuation bytes count as none; MaxDecodedBytes still bounds them).
	// Since a character takes 1 to 4 bytes, MaxDecodedBytes bounds
	// characters too; as a rule of thumb for English text, one token is
	// about 4 characters, so a ceiling of T tokens is about 4*T characters.
	// Unit: characters. Zero means no separate character cap (the byte cap
	// still applies); negative is invalid. Near the cap the decoder is read
	// in pieces of a few KiB, so that a run of continuation bytes costs one
	// read per piece, not per byte: detecting a breach may decode that much
	// past the cap (within MaxDecodedBytes), and none of it is returned.
	//
	// Decoded characters are not what an agent is charged for once a body
	// is serialised: a NUL is one character and six in JSON (\u0000), a
	// stray continuation byte none and 4/3 in base64. So [boundhttp.Fetch],
	// [boundhttp.Preview] and [boundhttp.ResultOf] also hold the body as
	// the Result serialises it to MaxDecodedRunes characters (JSON escapes
	// counted as encoding/json writes them, or the base64 form of a body
	// that is not UTF-8; see boundhttp.Result.BodyChars), and reject one
	// over it with StageRunes, Observed being the serialised count. The
	// Transport alone, a Middleware and a decoding.Reader count decoded
	// characters only.
	MaxDecodedRunes int64

	// Timeout caps the time a body takes, up to its verified end. The
	// clock starts once the headers are in: [boundhttp.Transport] starts it
	// when the response headers arrive (so a server that stalls before the
	// first body byte is cut off too), [boundhttp.Middleware] when it
	// starts reading the body (in streaming mode at the handler's first
	// Read), and a decoding.Reader used on its own at its first Read. It does not cover connecting, sending the request or
	// waiting for the headers. A body that reaches its end after Timeout is
	// rejected; whether a read blocked in the source can be interrupted
	// depends on the source (package decoding says what a plain io.Reader
	// allows; the Transport closes its source, and the connection if it
	// must). Zero means none here (a decoding.Reader, streaming mode);
	// [boundhttp.Transport] and [boundhttp.Middleware] then apply
	// boundhttp.DefaultBodyTimeout (60 s) in whole-body mode, and the
	// Transport bounds the time before the headers with its own
	// HeaderTimeout. Unit: a duration.
	Timeout time.Duration
}

// RatioGrace is the number of decoded bytes a body may produce before
// [Budget.MaxRatio] is checked, so that small, highly compressible bodies
// (a short run of spaces, an empty JSON array) are not rejected. A body of
// at most RatioGrace decoded bytes never fails the ratio; past it, the ratio
// of the bytes decoded so far to the wire bytes read so far is checked on
// every read, the one that ends the body included. The verdict is
// monotonic in MaxRatio (a body that passes a limit passes every higher
// one), not in a body's overall ratio: a body whose first part expands
// more than MaxRatio fails even if what follows brings its overall ratio
// below that of a body that passes, and where the checks fall depends on
// the sizes of the reads.
const RatioGrace = 16 << 10

// Validate reports the first invalid field of b, or nil. The error names the
// field and its value.
func (b Budget) Validate() error {
	switch {
	case b.MaxWireBytes < 0:
		return fmt.Errorf("limits: Budget.MaxWireBytes is negative (%d)", b.MaxWireBytes)
	case b.MaxDecodedBytes < 0:
		return fmt.Errorf("limits: Budget.MaxDecodedBytes is negative (%d)", b.MaxDecodedBytes)
	case b.MaxLayers < 0:
		return fmt.Errorf("limits: Budget.MaxLayers is negative (%d)", b.MaxLayers)
	case b.MaxWindowBytes < 0:
		return fmt.Errorf("limits: Budget.MaxWindowBytes is negative (%d)", b.MaxWindowBytes)
	case math.IsNaN(b.MaxRatio) || math.IsInf(b.MaxRatio, 0) || b.MaxRatio < 0:
		return fmt.Errorf("limits: Budget.MaxRatio is invalid (%v)", b.MaxRatio)
	case b.MaxRatio > 0 && b.MaxRatio < 1:
		return fmt.Errorf("limits: Budget.MaxRatio is below 1 (%v)", b.MaxRatio)
	case b.MaxDecodedRunes < 0:
		return fmt.Errorf("limits: Budget.MaxDecodedRunes is negative (%d)", b.MaxDecodedRunes)
	case b.Timeout < 0:
		return fmt.Errorf("limits: Budget.Timeout is negative (%v)", b.Timeout)
	}
	return nil
}

// WithDefaults returns b with every zero field replaced by its default.
// It does not validate b.
func (b Budget) WithDefaults() Budget {
	setDefault(&b.MaxWireBytes, DefaultMaxWireBytes)
	setDefault(&b.MaxDecodedBytes, DefaultMaxDecodedBytes)
	setDefault(&b.MaxLayers, DefaultMaxLayers)
	setDefault(&b.MaxWindowBytes, DefaultMaxWindowBytes)
	return b
}

// setDefault replaces a zero *v with d: the one rule of every limit type
// of this package, zero means the default.
func setDefault[T int | int64](v *T, d T) {
	if *v == 0 {
		*v = d
	}
}

// CheckContentLength reports a [StageWire] error if a declared body length n
// exceeds the wire limit of b (after defaults). A negative n means unknown
// and passes: the limit is then enforced while reading.
func (b Budget) CheckContentLength(n int64) error {
	max := b.MaxWireBytes
	setDefault(&max, DefaultMaxWireBytes)
	if n > max {
		return &Error{Stage: StageWire, Limit: max, Observed: n, Declared: true}
	}
	return nil
}
