package boundhttp

import (
	"net/http"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// readWhole reads the whole body, within Budget.Timeout whatever wraps the
// writer. Where a read deadline reaches the connection (or there is no
// Timeout), that is the body's own read. Where none does (a writer without
// Unwrap outside the middleware), a read that stalls would hold the
// exchange, unanswered, until the server's ReadTimeout: the read then runs
// apart, and if it has not ended drainIdle after the Timeout (a read that
// gets bytes ends by itself at its next read, with the body's own timeout
// breach), readWhole returns the timeout breach with abandoned set (see
// readApart). The abandoned read keeps the body, its decoder and its
// in-flight share until it returns (the client sends or leaves, or the
// server's ReadTimeout ends it); the Finish the handler's return calls
// releases them then, as the body's guard allows.
func (x *exchange) readWhole() (e *limits.Error, ok, abandoned bool) {
	if src := x.body.Source(); src.ArmedAt.IsZero() && src.Budget.Timeout > 0 {
		return x.readApart(src.Budget.Timeout)
	}
	if x.body.ReadAll() == nil {
		return nil, true, false
	}
	return x.body.Breach(), false, false
}

// readApart reads the whole body in a goroutine of its own, and gives up
// on it drainIdle after timeout (see readWhole).
func (x *exchange) readApart(timeout time.Duration) (e *limits.Error, ok, abandoned bool) {
	done := make(chan readResult, 1)
	go func() {
		var res readResult
		defer func() {
			if p := recover(); p != nil {
				res.panicked, res.value = true, p
			}
			done <- res
		}()
		res.err = x.body.ReadAll()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	for grace := false; ; grace = true { // two rounds at most
		select {
		case res := <-done:
			if res.panicked {
				// The handler's goroutine panics as an inline read would
				// (net/http recovers it there); a panic on the read's own
				// goroutine would end the process.
				panic(res.value)
			}
			if res.err == nil {
				return nil, true, false
			}
			return x.body.Breach(), false, false
		case <-t.C:
		}
		if grace {
			ms := timeout.Milliseconds()
			return &limits.Error{Stage: limits.StageTimeout, Limit: ms, Observed: ms, Err: errStalledRead}, false, true
		}
		// A read that still gets bytes ends by itself at its next read,
		// with the body's own timeout breach (and the drain after it): only
		// one that waits drainIdle more is taken as stalled.
		t.Reset(drainIdle)
	}
}

// readResult is the end of a read run apart: its error, or the panic it
// recovered. An abandoned read's panic is dropped: the body's guard and
// in-flight share are released by the body itself, and the exchange was
// already answered.
type readResult struct {
	err      error
	panicked bool
	value    any
}

// errStalledRead is the cause of a timeout answered while the body's read
// still waits: no read deadline could be set on the connection.
var errStalledRead = stalledRead{}

type stalledRead struct{}

func (stalledRead) Error() string   { return "body read stalled past the timeout" }
func (stalledRead) Timeout() bool   { return true }
func (stalledRead) Temporary() bool { return true }

// answerStalled answers the timeout of a read still in progress: as any
// rejection, but without the drain, whose reads would wait behind the
// stalled one; net/http sends the answer of a Connection: close exchange
// without touching the body.
func (m *middleware) answerStalled(w http.ResponseWriter, r *http.Request, e *limits.Error) {
	m.answer(w, r, e, false, true)
}
