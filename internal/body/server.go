package body

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// serverError turns an error reading a request body into the rejection to
// answer, or nil only when the client is gone and no answer can arrive. A
// read deadline's reports the time since start as observed (zero start:
// unknown, taken as timeout): the deadline that ended the read may be the
// server's own ReadTimeout, earlier than Budget.Timeout.
//
// Returning without writing is not "no answer": net/http then sends
// 200 OK with an empty body, telling a proxy or client that a request the
// handler never saw succeeded. So every error that is not a vanished
// client is answered: a limit of the budget as itself, a read deadline as
// timeout (408), an outer [http.MaxBytesReader] limit (http.MaxBytesHandler)
// as wire (413) with that limit, and anything else the server's body reader
// reports (a malformed chunk size, an HTTP/2 stream whose DATA disagrees
// with its content-length) as integrity (400).
func serverError(ctx context.Context, err error, timeout time.Duration, start time.Time) *limits.Error {
	var le *limits.Error
	if errors.As(err, &le) {
		return le
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		observed := timeout
		if !start.IsZero() {
			observed = time.Since(start)
		}
		return &limits.Error{Stage: limits.StageTimeout, Limit: timeout.Milliseconds(),
			Observed: observed.Milliseconds(), Err: deadlineError{err}}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		observed := mbe.Limit
		if observed < math.MaxInt64 {
			observed++
		}
		return &limits.Error{Stage: limits.StageWire, Limit: mbe.Limit, Observed: observed, Err: err}
	}
	if clientGone(ctx, err) {
		return nil
	}
	return &limits.Error{Stage: limits.StageIntegrity, Err: framingError{err}}
}

// framingError is a failure of the server's own body reader. Its text is
// fixed, because the reader's may quote what the client sent (net/http
// quotes a malformed chunked trailer line whole), and no byte of a body
// reaches a problem document, a log record or Error() text. Unwrap gives
// the reader's error to errors.Is and errors.As.
type framingError struct{ err error }

func (framingError) Error() string   { return "malformed request framing" }
func (e framingError) Unwrap() error { return e.err }

// deadlineError is a read that ended at the connection's read deadline.
// Its text is fixed, because the connection's error names both socket
// addresses ("read tcp 10.0.0.5:8080->10.0.0.2:51234: i/o timeout"), and
// behind a proxy those are internal addresses that must not reach a problem
// document, a log record or Error() text. Unwrap gives the connection's
// error to errors.Is (os.ErrDeadlineExceeded) and errors.As (*net.OpError).
type deadlineError struct{ err error }

func (deadlineError) Error() string   { return "read deadline exceeded" }
func (e deadlineError) Unwrap() error { return e.err }

// clientGone reports whether err says the client went away: the request's
// context ended (an HTTP/2 stream reset, a closed connection noticed by the
// server), the connection failed or closed, or the body was cut short by
// the connection's end.
func clientGone(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, http.ErrBodyReadAfterClose)
}
