package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/internal/sat"
)

// StageInFlight is the stage of a body refused because the process-wide
// [InFlight] budget had no room for it.
const StageInFlight Stage = "inflight" // bytes all bodies and decoders hold together

// ErrBusy classifies [StageInFlight] errors: the [InFlight] budget had no
// room. A busy error whose Observed exceeds its Limit could never fit; any
// other may succeed later.
var ErrBusy = errors.New("limits: in-flight budget exhausted")

// An InFlight is a process-wide budget of bytes in flight: what all bodies
// and decoders that charge it hold together at one moment (buffered bodies as
// they grow, decoder state before it is allocated). One InFlight is shared
// by any number of Transports, Middlewares and decoding Readers.
//
// The unit is bytes of memory held, whatever the coding; it counts what the
// library charges, not the heap: it does not cover the bytes of a body a
// caller copied elsewhere, a handler's own allocations, net/http's
// per-connection buffers, or pooled memory idle between bodies.
//
// # Reservations and deadlock freedom
//
// A body holds a [Hold]. Only a Hold that holds nothing may wait for room
// ([Hold.Wait]); every other reservation ([Hold.Grow]) fails at once with
// [ErrBusy] when there is no room. Hence every byte of the budget is held by
// a body that is not waiting for the budget: it progresses (its peer sends,
// its handler or caller finishes, or its Timeout or context ends it) and
// gives its bytes back without needing any other body to give anything
// first. The wait-for graph has no edge from a holder to the budget, so it
// has no cycle: no set of bodies can wait on each other forever. A waiter
// that asks for more than [InFlight.Cap] fails at once instead of waiting.
//
// What this argument does not cover is a holder that waits for something
// else that waits for the budget: a handler that holds its request body
// while it fetches through a Transport sharing the same InFlight, or a
// caller that holds one whole response body while it fetches the next.
// Bound such fetches with a context deadline, or give them their own
// InFlight.
//
// Waiting is not fair: a large waiter may be passed by small ones.
//
// An InFlight is safe for concurrent use. Reservations do not allocate; a
// Wait that has to wait allocates one channel per wake-up.
type InFlight struct {
	cap   int64
	used  atomic.Int64
	peak  atomic.Int64
	nwait atomic.Int32 // waiters registered; Release wakes them when > 0

	mu   sync.Mutex
	wake chan struct{} // closed by Release when there are waiters; guarded by mu
}

// NewInFlight returns a budget of n bytes in flight. It panics if n <= 0,
// as a configuration error: there is no "unlimited" InFlight (use none).
func NewInFlight(n int64) *InFlight {
	if n <= 0 {
		panic(fmt.Sprintf("limits: NewInFlight(%d): capacity must be positive", n))
	}
	return &InFlight{cap: n}
}

// Cap returns the capacity in bytes.
func (f *InFlight) Cap() int64 { return f.cap }

// InUse returns the bytes held now.
func (f *InFlight) InUse() int64 { return f.used.Load() }

// Peak returns the most bytes ever held at one moment. It never exceeds Cap.
func (f *InFlight) Peak() int64 { return f.peak.Load() }

// tryAcquire takes n bytes if they fit, and reports whether it did.
func (f *InFlight) tryAcquire(n int64) bool {
	for {
		u := f.used.Load()
		if n > f.cap-u {
			return false
		}
		if f.used.CompareAndSwap(u, u+n) {
			u += n
			for {
				p := f.peak.Load()
				if u <= p || f.peak.CompareAndSwap(p, u) {
					return true
				}
			}
		}
	}
}

// release gives back n bytes and wakes the waiters, if any.
func (f *InFlight) release(n int64) {
	if n == 0 {
		return
	}
	if f.used.Add(-n) < 0 {
		panic("limits: InFlight released more than it held")
	}
	if f.nwait.Load() > 0 {
		f.mu.Lock()
		if f.wake != nil {
			close(f.wake)
			f.wake = nil
		}
		f.mu.Unlock()
	}
}

// acquire takes n bytes, waiting until they fit or ctx is done.
func (f *InFlight) acquire(ctx context.Context, n int64) error {
	for {
		if f.tryAcquire(n) {
			return nil
		}
		f.mu.Lock()
		if f.wake == nil {
			f.wake = make(chan struct{})
		}
		ch := f.wake
		f.nwait.Add(1)
		f.mu.Unlock()
		// A release between the failed attempt and the registration saw no
		// waiter: try again now that release will see this one.
		if f.tryAcquire(n) {
			f.nwait.Add(-1)
			return nil
		}
		select {
		case <-ch:
			f.nwait.Add(-1)
		case <-ctx.Done():
			f.nwait.Add(-1)
			return ctx.Err()
		}
	}
}

// A Hold is what one body holds of an [InFlight]: the unit of the
// reservation scheme described there. The zero Hold, and a Hold of a nil
// InFlight, charge nothing and never fail.
//
// A Hold is not safe for concurrent use; the InFlight it charges is.
type Hold struct {
	f    *InFlight
	held int64
}

// Init makes h charge f (nil: nothing). It panics if h holds bytes.
func (h *Hold) Init(f *InFlight) {
	if h.held != 0 {
		panic("limits: Hold.Init while holding")
	}
	h.f = f
}

// InFlight returns the budget h charges, or nil.
func (h *Hold) InFlight() *InFlight { return h.f }

// Held returns the bytes h holds.
func (h *Hold) Held() int64 { return h.held }

// Grow reserves n more bytes without waiting. It fails with a
// [*Error] of [StageInFlight] (errors.Is [ErrBusy]) whose Observed is what h
// would hold and whose Limit is the capacity, when they do not fit now.
// n <= 0 reserves nothing.
func (h *Hold) Grow(n int64) error {
	if h.f == nil || n <= 0 {
		return nil
	}
	if !h.f.tryAcquire(n) {
		return h.busy(n, nil)
	}
	h.held += n
	return nil
}

// Wait reserves n bytes as Grow does, except that a Hold that holds nothing
// waits for room until ctx is done (ctx nil: no wait); the error then wraps
// ctx.Err(). A Hold that holds bytes never waits, and n above the capacity
// fails at once: see [InFlight] for why.
func (h *Hold) Wait(ctx context.Context, n int64) error {
	if h.f == nil || n <= 0 {
		return nil
	}
	if h.held != 0 || ctx == nil || n > h.f.cap {
		return h.Grow(n)
	}
	if err := h.f.acquire(ctx, n); err != nil {
		return h.busy(n, err)
	}
	h.held = n
	return nil
}

// Shrink gives back n of the bytes h holds (at most what it holds).
func (h *Hold) Shrink(n int64) {
	if h.f == nil || n <= 0 {
		return
	}
	n = min(n, h.held)
	h.held -= n
	h.f.release(n)
}

// Split moves n of the bytes h holds (at most what it holds) into a new
// Hold of the same InFlight, which gives them back on its own.
func (h *Hold) Split(n int64) Hold {
	n = max(min(n, h.held), 0)
	h.held -= n
	return Hold{f: h.f, held: n}
}

// Release gives back everything h holds. It is idempotent.
func (h *Hold) Release() {
	if h.f != nil && h.held != 0 {
		n := h.held
		h.held = 0
		h.f.release(n)
	}
}

func (h *Hold) busy(n int64, cause error) *Error {
	return &Error{Stage: StageInFlight, Limit: h.f.cap, Observed: sat.Add(h.held, n), Err: cause}
}

// busyText is the Error text of a body that would fit the InFlight budget
// but not now.
func (e *Error) busyText() string {
	b := []byte("limits: inflight: budget busy: needs ")
	b = strconv.AppendInt(b, e.Observed, 10)
	b = append(b, " of limit "...)
	b = strconv.AppendInt(b, e.Limit, 10)
	b = append(b, " bytes"...)
	b = appendEncoding(b, e.Encoding)
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}
