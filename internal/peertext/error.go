package peertext

import "errors"

// MaxError is the most bytes of an error's text that [Text] and an [Error]
// keep: text a peer may have chosen (net/http quotes a malformed header
// line, an HTTP/2 field name, GOAWAY debug data, a proxy's reason phrase)
// is cut to it and escaped as [Echo] escapes, so the text is at most
// 4*MaxError+24 bytes long ([MaxErrorText]).
const MaxError = 256

// MaxErrorText is the most bytes [Text] returns and an [Error]'s text has.
const MaxErrorText = 4*MaxError + 24

// An Error is an error from outside this module (the base transport, a
// body's source) whose text may quote a peer. Its text is the original's
// cut to MaxError bytes and escaped; errors.Is and errors.As reach the
// original through Unwrap, and Timeout reports what the original's chain
// reports, so that code written for net/http's timeouts still recognises
// it (a *url.Error asks its direct cause).
type Error struct{ err error }

// Bound returns err as it may enter an error of this module: err itself
// when it is nil, already an [*Error], or its text is already bounded
// and plain (at most MaxError bytes of printable ASCII without a
// backslash), so that ordinary errors keep their identity; otherwise err
// wrapped in an *Error.
func Bound(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*Error); ok {
		return err
	}
	if plain(err.Error()) {
		return err
	}
	return &Error{err: err}
}

// Text returns the text of err as an error of this module may carry it:
// an [*Error]'s own text, a plain text (see [Bound]) as it is, and any
// other text cut to MaxError bytes and escaped. It is at most
// MaxErrorText bytes long, printable ASCII only.
func Text(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Error()
	}
	t := err.Error()
	if plain(t) {
		return t
	}
	return Echo(t, MaxError)
}

func (e *Error) Error() string { return Echo(e.err.Error(), MaxError) }

// Unwrap returns the original error.
func (e *Error) Unwrap() error { return e.err }

// Timeout reports whether the original error, or one it wraps, reports a
// timeout.
func (e *Error) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}

// plain reports whether s is at most MaxError bytes of printable ASCII
// without a backslash: text that Echo would leave as it is.
func plain(s string) bool {
	if len(s) > MaxError {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
