package boundhttp

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
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

// headerTimer cancels a request whose response headers are late. Once
// they arrived (stop returned), the same timer guards the Close of the
// response body (see [connBody.Close]): a request arms one timer for both,
// not a new one at every Close.
type headerTimer struct {
	t       *time.Timer
	limit   time.Duration
	cancel  func()
	w       *connWatch
	closing atomic.Bool // set once the headers arrived: firing closes w's connection
}

// startHeaderTimer arms Transport.HeaderTimeout in h: when it elapses
// before stop, cancel ends the request. w is the connection a Close of the
// body closes if it does not return in time (see [headerTimer.guardClose]).
func (t *Transport) startHeaderTimer(h *headerTimer, cancel func(), w *connWatch) *headerTimer {
	h.limit, h.cancel, h.w = t.HeaderTimeout, cancel, w
	if h.limit == 0 {
		h.limit = time.Duration(headerTimeoutDefault.Load()) // see DefaultHeaderTimeout
	}
	h.t = time.AfterFunc(h.limit, h.fire)
	return h
}

// fire cancels the request, or, once the timer guards a Close, closes the
// connection that Close is stuck on.
func (h *headerTimer) fire() {
	if h.closing.Load() {
		h.w.closeConn()
		return
	}
	h.cancel()
}

// stop disarms the timer once the base transport returned resp and err,
// and returns the error of the round trip: a header timeout if the timer
// fired first (the request is then cancelled, and resp's body closed),
// else err. Only after a nil error may the timer guard a Close.
func (h *headerTimer) stop(resp *http.Response, err error) error {
	if h.t.Stop() {
		return err
	}
	if err == nil && resp.Body != nil {
		resp.Body.Close()
	}
	return &headerTimeoutError{limit: h.limit}
}

// guardClose arms the timer, stopped by stop, to close the connection if
// the Close it guards has not returned within d; closed disarms it. It is
// called at most once (by the first Close of the body).
func (h *headerTimer) guardClose(d time.Duration) {
	h.closing.Store(true) // ordered before the Reset, hence before fire
	h.t.Reset(d)
}

// closed disarms the timer guardClose armed.
func (h *headerTimer) closed() { h.t.Stop() }
