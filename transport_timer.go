package boundhttp

import (
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/boundhttp/boundhttp/internal/body"
)

// tripTimer is the one timer of a round trip. It runs three deadlines one
// after the other: Transport.HeaderTimeout until the response headers
// came, then the body's Budget.Timeout (it is the [body.Timer] the body is
// lent), then the guard of the body's Close (see [connBody.Close]). A
// timer armed once and moved from phase to phase costs the runtime one
// timer per round trip instead of one per phase.
//
// A phase is armed only on a timer that is known not to run: one whose
// Stop reported that it stopped it. So a firing always belongs to the
// phase it was armed for. A timer that fired, or that is still armed for
// the body when the Close comes, is never armed again: the Close is then
// guarded by a timer of its own.
type tripTimer struct {
	slot   *timerSlot // the round trip's timer, until it goes back to the pool (see closed)
	phase  atomic.Int32
	limit  time.Duration              // HeaderTimeout
	cancel func()                     // cancels the request
	w      *connWatch                 // the request's connection, closed by the Close guard
	body   *body.Body                 // expired by the body phase
	guard  *connBody                  // told by the body phase that its deadline passed
	spare  atomic.Pointer[time.Timer] // guards a Close when the slot's timer could not
	mark   atomic.Int64               // the connection's progress at the Close guard's last look (see connWatch.moving)
	since  time.Time                  // when the Close guard was armed; set before it can fire
	done   atomic.Bool                // the guarded Close returned: the guard's firings do nothing
}

// timerSlot is a trip timer's time.Timer with its callback bound to the
// slot rather than to one round trip: once a Stop proved that it will not
// fire again for its round trip, a later round trip takes it over (see
// timerSlots). The timer and the function it calls are two allocations a
// round trip would otherwise make.
type timerSlot struct {
	t    *time.Timer
	h    atomic.Pointer[tripTimer] // the round trip it fires for
	fake bool                      // made in a testing/synctest bubble: never pooled
}

func (s *timerSlot) fire() { s.h.Load().fire(s) }

// timerSlots holds the slots of round trips that ended with their timer
// stopped before it fired. Only timers on the real clock are pooled, and
// only round trips outside a testing/synctest bubble take them: a bubble's
// timer must not be used outside it (the runtime aborts the process), nor a
// real one inside it (it would not follow the bubble's clock).
var timerSlots sync.Pool

// The phases of a tripTimer.
const (
	phaseHeaders  int32 = iota // firing cancels the request
	phaseIdle                  // stopped before it fired: free to arm
	phaseBody                  // firing expires the body
	phaseStopping              // the body's deadline is being stopped
	phaseSpent                 // the body's deadline fired: never armed again
	phaseClose                 // firing closes the connection
)

// startTripTimer arms Transport.HeaderTimeout in h: when it elapses
// before stop, cancel ends the request. w is the connection a Close of the
// body closes if it does not return in time (see [tripTimer.guardClose]).
func (t *Transport) startTripTimer(h *tripTimer, cancel func(), w *connWatch) *tripTimer {
	h.limit, h.cancel, h.w = t.HeaderTimeout, cancel, w
	if h.limit == 0 {
		h.limit = time.Duration(headerTimeoutDefault.Load()) // see DefaultHeaderTimeout
	}
	fake := inBubble()
	if !fake {
		if s, ok := timerSlots.Get().(*timerSlot); ok {
			s.h.Store(h)
			h.slot = s
			s.t.Reset(h.limit)
			return h
		}
	}
	s := &timerSlot{fake: fake}
	s.h.Store(h)
	s.t = time.AfterFunc(h.limit, s.fire)
	h.slot = s
	return h
}

// fire runs the deadline of the phase s's timer was armed for.
func (h *tripTimer) fire(s *timerSlot) {
	switch h.phase.Load() {
	case phaseHeaders:
		h.cancel()
	case phaseBody, phaseStopping, phaseSpent: // a Stop that came too late
		h.body.Expire()
		h.guard.deadlinePassed()
	case phaseClose:
		h.look(s.t)
	}
}

// look is a firing of the Close guard, on timer t: while the Close it
// guards still waits, it closes the connection if its writes did not move
// since the last look or the Close has waited closeWaitMax, else looks
// again abortGrace later (closed stops t, or it fires to no effect).
func (h *tripTimer) look(t *time.Timer) {
	switch {
	case h.done.Load():
	case !h.w.moving(&h.mark) || time.Since(h.since) >= closeWaitMax:
		h.w.closeConn()
	default:
		t.Reset(abortGrace)
	}
}

// spareFired is the spare guard's firing.
func (h *tripTimer) spareFired() { h.look(h.spare.Load()) }

// stop disarms the header deadline once the base transport returned resp
// and err, and returns the error of the round trip: a header timeout if the
// timer fired first (the request is then cancelled, and resp's body
// closed), else err.
func (h *tripTimer) stop(resp *http.Response, err error) error {
	if h.slot.t.Stop() {
		h.phase.Store(phaseIdle)
		return err
	}
	if err == nil && resp.Body != nil {
		resp.Body.Close()
	}
	return &headerTimeoutError{limit: h.limit}
}

// lend makes the timer the clock of b's Budget.Timeout (see [body.Timer]),
// once the headers' deadline stopped; when it fires, b expires and g's
// grace starts. It returns nil, and b makes a timer of its own, if the
// timer is not free.
func (h *tripTimer) lend(b *body.Body, g *connBody) body.Timer {
	if h.phase.Load() != phaseIdle {
		return nil
	}
	h.body, h.guard = b, g
	return h
}

// Start arms the body's deadline on the timer lend found free. The fields
// fire reads were set before, and the phase orders them before the firing.
func (h *tripTimer) Start(d time.Duration) {
	if h.phase.CompareAndSwap(phaseIdle, phaseBody) {
		h.slot.t.Reset(d)
	}
}

// Stop disarms the body's deadline, unless it fired. Of concurrent calls
// one stops it, and frees the timer for the Close guard if the deadline
// had not fired; the others return at once, so that none of them can
// stop the guard armed meanwhile.
func (h *tripTimer) Stop() {
	if !h.phase.CompareAndSwap(phaseBody, phaseStopping) {
		return
	}
	if h.slot.t.Stop() {
		h.phase.Store(phaseIdle)
	} else {
		h.phase.Store(phaseSpent)
	}
}

// guardClose arms the timer to close the connection if the Close it guards
// has not returned within d and the connection's writes did not move
// meanwhile; while they move, it looks again every abortGrace, for at most
// closeWaitMax. closed
// disarms it. It is called at most once (by the first Close of the body).
func (h *tripTimer) guardClose(d time.Duration) {
	h.mark.Store(h.w.markNow())
	h.since = time.Now()
	if h.phase.CompareAndSwap(phaseIdle, phaseClose) {
		h.slot.t.Reset(d)
		return
	}
	// The timer fired, or is armed for the body or being stopped: a timer
	// of its own, stored before it can fire.
	t := time.AfterFunc(math.MaxInt64, h.spareFired)
	h.spare.Store(t)
	t.Reset(d)
}

// closed disarms the timer guardClose armed. The round trip's timer is
// then done with: if this Stop stopped it, it will never fire for this
// round trip, and it goes back to the pool for another one. (If it fired,
// its function may still be on its way to the slot's round trip, which
// must stay this one.) Nothing of the round trip's touches the timer after
// closed: its phase stays phaseClose, which every other use checks first.
func (h *tripTimer) closed() {
	h.done.Store(true)
	if t := h.spare.Load(); t != nil {
		t.Stop()
		return
	}
	if s := h.slot; s.t.Stop() && !s.fake {
		h.slot = nil
		s.h.Store(nil) // the pool keeps no round trip alive
		timerSlots.Put(s)
	}
}
