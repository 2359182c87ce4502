package limits

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/boundhttp/boundhttp/internal/peertext"
)

// A Stage names the point of a body's path at which it was charged.
type Stage string

// The stages, in the order a body meets them.
const (
	StageWire      Stage = "wire"      // body bytes read off the connection
	StageLayers    Stage = "layers"    // number of content-codings
	StageEncoding  Stage = "encoding"  // a content-coding that cannot be decoded
	StageWindow    Stage = "window"    // decoder history a stream declares
	StageDecoded   Stage = "decoded"   // bytes after content decoding
	StageRunes     Stage = "runes"     // characters after content decoding
	StageRatio     Stage = "ratio"     // decoded / wire
	StageIntegrity Stage = "integrity" // truncation, bad checksum, trailing bytes
	StageTimeout   Stage = "timeout"   // time to the verified end of the body
	StageJSON      Stage = "json"      // the shape of a JSON document
	StageResponse  Stage = "response"  // body bytes a server's handler writes
)

// Sentinels that classify an [*Error] for [errors.Is].
var (
	// ErrTooLarge matches breaches of StageWire, StageDecoded, StageRunes,
	// StageLayers, StageWindow, StageRatio and StageJSON, and of
	// StageResponse: a handler's response body passed the middleware's
	// response cap (the body is the server's own, not a peer's).
	ErrTooLarge = errors.New("limits: body too large")
	// ErrMalformed matches StageIntegrity: the body is truncated, corrupt,
	// fails a checksum or carries bytes after its end.
	ErrMalformed = errors.New("limits: body malformed")
	// ErrUnsupported matches StageEncoding: a content-coding that cannot be
	// decoded, so the body is refused rather than passed on still encoded.
	ErrUnsupported = errors.New("limits: content-coding unsupported")
	// ErrTimeout matches StageTimeout.
	ErrTimeout = errors.New("limits: body timeout")
)

// An Error is a rejected body. It carries numbers, never body content.
//
// Use [errors.As] to get at the fields and [errors.Is] with the sentinels
// ([ErrTooLarge], [ErrMalformed], [ErrUnsupported], [ErrTimeout]) to
// classify it.
type Error struct {
	// Stage is where the body was rejected.
	Stage Stage
	// Limit is the configured limit that tripped, in the unit of the stage:
	// bytes for wire, decoded, window and response; codings for layers; the ratio
	// rounded down for ratio; milliseconds for timeout, rounded down (so 0
	// for a timeout under 1 ms, which Error writes as "a timeout under
	// 1 ms"). Zero for stages without a numeric limit (encoding,
	// integrity).
	Limit int64
	// Observed is what was seen when the limit tripped, in the same unit:
	// bytes read so far (at most Limit+1), a declared Content-Length or
	// window, the number of codings, the ratio rounded down, the elapsed
	// milliseconds rounded down (Error writes 0 as "under 1 ms"). For StageResponse, the bytes the handler had written
	// counting the write that passed the cap (so possibly more than
	// Limit+1), or a declared Content-Length.
	Observed int64
	// Declared reports whether Observed is a declared value (Content-Length,
	// zstd frame content size or window) rather than bytes actually read.
	Declared bool
	// Encoding is the content-coding involved, if any ("gzip", "br", ...).
	// For StageLayers and StageEncoding it is the first coding that failed,
	// as the peer wrote it (raw, not escaped) but cut to [MaxEcho] bytes at
	// a rune boundary; every text made from an Error writes it through
	// [Echo] (see MaxEcho).
	Encoding string
	// Field names the limit that tripped where a stage has several: for
	// StageJSON "MaxDepth", "MaxArrayLen", "MaxStringLen",
	// "MaxObjectMembers", "MaxValues" or "MaxObjects"; "syntax" for a JSON
	// syntax error (StageIntegrity); "framing" for StageWire when a client
	// connection read more socket bytes (framing overhead: padding, empty
	// frames) than its allowance, Limit, for the body bytes it delivered
	// (see boundhttp.DefaultFramingRatio); Limit and Observed are then
	// socket bytes of the connection.
	Field string
	// Pointer is where in a JSON document the limit tripped, as a JSON
	// Pointer (RFC 6901) with object keys as written in the source. It is
	// exact, for Go callers; it may be as long as the keys a peer chose, so
	// Error writes it only through [EchoPointer].
	Pointer string
	// Err is the underlying cause (a decoder's error), or nil.
	Err error
}

// Error returns a one-line description without any body content: the
// coding and the pointer, which a peer chooses, appear only as [Echo] and
// [EchoPointer] render them, and the cause's text, Err.Error(), is appended
// as it is only when it is at most 256 bytes of printable ASCII (else cut to
// 256 bytes and escaped as Echo escapes), so the text is bounded whatever the
// peer sent: at most 4 KiB plus 89 bytes per token of the pointer (at most 32).
func (e *Error) Error() string {
	if e.Stage == StageInFlight && e.Observed <= e.Limit {
		return e.busyText()
	}
	var b []byte
	b = append(b, "limits: "...)
	b = append(b, e.Stage...)
	switch e.Stage {
	case StageEncoding:
		b = append(b, ": unsupported content-coding"...)
		if e.Encoding != "" {
			b = append(b, ` "`...)
			b = append(b, Echo(e.Encoding)...)
			b = append(b, '"')
		}
	case StageIntegrity:
		b = append(b, ": malformed body"...)
		b = appendEncoding(b, e.Encoding)
	case StageTimeout:
		// "observed 1000 > limit 1000 ms" would read as a contradiction when
		// the elapsed time rounds to the limit: say what was exceeded.
		// The fields are whole milliseconds, rounded down: a timeout under
		// 1 ms has Limit 0, which must not read as a timeout of zero.
		b = append(b, ": body not complete within "...)
		if e.Limit <= 0 {
			b = append(b, "a timeout under 1 ms"...)
		} else {
			b = strconv.AppendInt(b, e.Limit, 10)
			b = append(b, " ms"...)
		}
		b = append(b, " (elapsed "...)
		if e.Observed <= 0 {
			b = append(b, "under 1 ms)"...)
		} else {
			b = strconv.AppendInt(b, e.Observed, 10)
			b = append(b, " ms)"...)
		}
		b = appendEncoding(b, e.Encoding)
	default:
		b = append(b, " limit exceeded: "...)
		if e.Field != "" {
			b = append(b, Echo(e.Field)...)
			b = append(b, ": "...)
		}
		if e.Declared {
			b = append(b, "declared "...)
		} else {
			b = append(b, "observed "...)
		}
		b = strconv.AppendInt(b, e.Observed, 10)
		b = append(b, " > limit "...)
		b = strconv.AppendInt(b, e.Limit, 10)
		b = append(b, unit(e.Stage)...)
		b = appendEncoding(b, e.Encoding)
	}
	if e.Stage == StageJSON || e.Pointer != "" {
		// EchoPointer escapes every byte outside printable ASCII and the
		// backslash, so quoting needs only the quotes.
		b = append(b, ` at "`...)
		b = append(b, EchoPointer(e.Pointer)...)
		b = append(b, '"')
	}
	if e.Err != nil {
		// The cause may quote a peer (net/http's errors do): it is written
		// through the one owner of peer text, cut and escaped unless it is
		// already plain and short.
		b = append(b, ": "...)
		b = append(b, peertext.Text(e.Err)...)
	}
	return string(b)
}

// appendEncoding appends " (coding)" when there is a coding.
func appendEncoding(b []byte, enc string) []byte {
	if enc == "" {
		return b
	}
	b = append(b, " ("...)
	b = append(b, Echo(enc)...)
	return append(b, ')')
}

// Timeout reports whether e is a [StageTimeout] rejection, or one whose
// cause is a timeout (an in-flight wait that the request's deadline ended
// wraps context.DeadlineExceeded), the convention of [net.Error], so that
// code written for net/http timeouts recognises it: errors.As stops at e
// and never asks the cause.
func (e *Error) Timeout() bool {
	var t interface{ Timeout() bool }
	return e.Stage == StageTimeout || errors.As(e.Err, &t) && t.Timeout()
}

func unit(s Stage) string {
	switch s {
	case StageLayers:
		return " codings"
	case StageRunes:
		return " characters"
	case StageJSON:
		return ""
	case StageRatio:
		return " (decoded/wire)"
	case StageTimeout:
		return " ms"
	}
	return " bytes"
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel of e's stage.
func (e *Error) Is(target error) bool {
	return target != nil && target == e.Stage.Sentinel()
}

// Sentinel returns the sentinel error that classifies s, or nil for an
// unknown stage.
func (s Stage) Sentinel() error {
	switch s {
	case StageWire, StageDecoded, StageRunes, StageLayers, StageWindow, StageRatio, StageJSON, StageResponse:
		return ErrTooLarge
	case StageIntegrity:
		return ErrMalformed
	case StageEncoding:
		return ErrUnsupported
	case StageTimeout:
		return ErrTimeout
	case StageInFlight:
		return ErrBusy
	}
	return nil
}

// Usage is what one body actually cost.
type Usage struct {
	// WireBytes is the number of body bytes read off the connection.
	WireBytes int64 `json:"wire_bytes"`
	// DecodedBytes is the number of bytes handed on after decoding.
	DecodedBytes int64 `json:"decoded_bytes"`
}

// String formats u for logs.
func (u Usage) String() string {
	return fmt.Sprintf("wire=%d decoded=%d", u.WireBytes, u.DecodedBytes)
}
