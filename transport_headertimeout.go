package boundhttp

import (
	"errors"
	"strconv"
	"time"
)

// ErrHeaderTimeout matches (with [errors.Is]) the error of a RoundTrip
// whose response headers did not arrive within [Transport.HeaderTimeout].
// The error's Timeout method reports true, so code written for net/http's
// timeouts recognises it, through the *url.Error of [http.Client] too.
var ErrHeaderTimeout = errors.New("boundhttp: no response headers in time")

// headerTimeoutError is the error of a RoundTrip cut off by
// Transport.HeaderTimeout.
type headerTimeoutError struct{ limit time.Duration }

func (e *headerTimeoutError) Error() string {
	return "boundhttp: no response headers within " + e.limit.String() +
		" (Transport.HeaderTimeout " + strconv.FormatInt(e.limit.Milliseconds(), 10) + " ms)"
}

// Timeout reports true: the error is a timeout.
func (e *headerTimeoutError) Timeout() bool { return true }

// Temporary reports true, as net/http's own timeouts do.
func (e *headerTimeoutError) Temporary() bool { return true }

// Is reports whether target is ErrHeaderTimeout.
func (e *headerTimeoutError) Is(target error) bool { return target == ErrHeaderTimeout }
