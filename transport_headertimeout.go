package boundhttp

import (
	"errors"
	"net/http"
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

// headerTimer cancels a request whose response headers are late.
type headerTimer struct {
	t     *time.Timer
	limit time.Duration
}

// startHeaderTimer arms Transport.HeaderTimeout: when it elapses before
// stop, cancel ends the request.
func (t *Transport) startHeaderTimer(cancel func()) *headerTimer {
	h := &headerTimer{limit: t.HeaderTimeout}
	if h.limit == 0 {
		h.limit = time.Duration(headerTimeoutDefault.Load()) // see DefaultHeaderTimeout
	}
	h.t = time.AfterFunc(h.limit, cancel)
	return h
}

// stop disarms the timer once the base transport returned resp and err,
// and returns the error of the round trip: a header timeout if the timer
// fired first (the request is then cancelled, and resp's body closed),
// else err.
func (h *headerTimer) stop(resp *http.Response, err error) error {
	if h.t.Stop() {
		return err
	}
	if err == nil && resp.Body != nil {
		resp.Body.Close()
	}
	return &headerTimeoutError{limit: h.limit}
}
