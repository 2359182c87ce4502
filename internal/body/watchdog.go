package body

import (
	"sync"
	"time"
)

// A whole request body is read at once, before the handler runs, and most
// arrive in microseconds. Setting the connection's read deadline before the
// read and clearing it after costs two trips through the runtime's network
// poller per request (each may wake a sleeping poller thread), which is
// several percent of a small request on loopback. So a whole body's
// Budget.Timeout is kept by one process-wide watchdog instead: the body is
// registered with its deadline when opened and unregistered when its read
// ends, and only a read still running at its deadline has the connection's
// read deadline set, to the past, which ends it as a deadline set up front
// would have. The body's end is checked against the deadline too (see
// late), so a body that ends after it is rejected whatever interrupted it.

// watchdog holds the bodies whose deadline it keeps in a min-heap by
// deadline, and one timer armed for the earliest deadline it was told of.
// The timer is reset only for a deadline earlier than the one it is armed
// for: bodies of one budget arrive with later deadlines than the ones
// before, so under steady load the timer fires about once per Timeout, not
// once per request. A heap, not a list scanned at each expiry: clients that
// stall on purpose each expire on their own, and a scan of every waiting
// body per expiry, under the lock every request takes, would cost the
// process the square of their number.
type watchdog struct {
	mu       sync.Mutex
	heap     []*Body     // the watched bodies, earliest deadline first; watchEntry.i is the place
	timer    *time.Timer // nil until the first body
	target   int64       // when the timer fires, since epoch; valid when armed
	armed    bool        // the timer is armed for target
	compares int         // deadline comparisons made (for tests)
}

// watchEntry is a body's place in the watchdog's heap; guarded by the
// watchdog's mu.
type watchEntry struct {
	i        int32 // its index in the heap
	on       bool  // in the heap
	deadline int64 // when the body's read is ended, in nanoseconds since epoch
}

// epoch is the watchdog's origin of time: deadlines are kept as monotonic
// nanoseconds since it (16 bytes per body rather than 40).
var epoch = time.Now()

// sinceEpoch returns t as nanoseconds since epoch, saturated.
func sinceEpoch(t time.Time) int64 { return int64(t.Sub(epoch)) }

// watch is the process's watchdog of whole request bodies.
var watch watchdog

// add watches b until remove, ending its read at deadline d (nanoseconds
// since epoch).
func (w *watchdog) add(b *Body, d int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b.watch.deadline, b.watch.on, b.watch.i = d, true, int32(len(w.heap))
	w.heap = append(w.heap, b)
	w.up(len(w.heap) - 1)
	if !w.armed || d < w.target {
		w.arm(d)
	}
}

// remove stops watching b; it is a no-op for a body not watched.
func (w *watchdog) remove(b *Body) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b.watch.on {
		w.take(int(b.watch.i))
	}
}

// take removes the heap's i-th body; the caller holds mu. The slot it
// leaves is cleared, so that the heap's array holds no ended body, and the
// array shrinks once a burst has passed.
func (w *watchdog) take(i int) *Body {
	b, last := w.heap[i], len(w.heap)-1
	w.swap(i, last)
	w.heap[last] = nil
	w.heap = w.heap[:last]
	if i < last && !w.up(i) {
		w.down(i)
	}
	b.watch.on = false
	if c := cap(w.heap); c > 64 && len(w.heap) < c/4 {
		w.heap = append(make([]*Body, 0, c/2), w.heap...)
	}
	return b
}

// before reports whether the heap's i-th deadline is before its j-th.
func (w *watchdog) before(i, j int) bool {
	w.compares++
	return w.heap[i].watch.deadline < w.heap[j].watch.deadline
}

func (w *watchdog) swap(i, j int) {
	w.heap[i], w.heap[j] = w.heap[j], w.heap[i]
	w.heap[i].watch.i, w.heap[j].watch.i = int32(i), int32(j)
}

// up moves the i-th body up to its place, and reports whether it moved.
func (w *watchdog) up(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !w.before(i, p) {
			break
		}
		w.swap(i, p)
		i, moved = p, true
	}
	return moved
}

// down moves the i-th body down to its place.
func (w *watchdog) down(i int) {
	for n := len(w.heap); ; {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && w.before(c+1, c) {
			c++
		}
		if !w.before(c, i) {
			return
		}
		w.swap(i, c)
		i = c
	}
}

// arm sets the timer to fire at t (since epoch); the caller holds mu.
func (w *watchdog) arm(t int64) {
	w.target, w.armed = t, true
	in := time.Duration(t) - time.Since(epoch) // no overflow: t fits, the elapsed time is positive
	if w.timer == nil {
		w.timer = time.AfterFunc(in, w.fire)
		return
	}
	w.timer.Reset(in)
}

// fire ends the reads of the bodies past their deadline and arms the timer
// for the earliest deadline left; it looks at no body that is not due but
// the first. The bodies are interrupted after mu is released: interrupt
// takes the body's own lock, which the body holds while it removes itself.
func (w *watchdog) fire() {
	var due []*Body
	w.mu.Lock()
	now := int64(time.Since(epoch))
	for len(w.heap) > 0 {
		w.compares++
		if w.heap[0].watch.deadline > now {
			break
		}
		due = append(due, w.take(0))
	}
	w.armed = false
	if len(w.heap) > 0 {
		w.arm(w.heap[0].watch.deadline)
	}
	w.mu.Unlock()
	for _, b := range due {
		b.interrupt()
	}
}

// watching reports how many bodies the watchdog holds, and how many ended
// bodies its array still points to, which must be none (for tests).
func (w *watchdog) watching() (n, stale int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.heap[len(w.heap):cap(w.heap)] {
		if b != nil {
			stale++
		}
	}
	return len(w.heap), stale
}

// interrupt ends a read of b that is still running at its deadline, by
// setting the connection's read deadline to the past, unless the read
// already ended or the body's life did.
func (b *Body) interrupt() {
	b.dl.Lock()
	defer b.dl.Unlock()
	if b.settled.Load() || b.g.closed() {
		return
	}
	b.interrupted = b.src.RC.SetReadDeadline(time.Unix(1, 0)) == nil
}

// unwatch takes a watched body out of the watchdog once its read ended or
// its life did, and reports whether the watchdog interrupted the read
// before: after it returned, no interrupt touches the connection. A past
// deadline, once set, is never undone, and a read it may have ended is
// never accepted (see outcome): on HTTP/1 net/http's background read,
// started as soon as the connection's body ended, fails on it and cancels
// the request's context, and on HTTP/2 the stream's body is closed for
// good; so nothing more is waited for from that client either.
func (b *Body) unwatch() (interrupted bool) {
	if !b.src.Watched {
		return false
	}
	if b.watched.Swap(false) {
		watch.remove(b)
	} else if b.settled.Load() {
		// Settled under dl before: interrupted no longer changes.
		return b.interrupted
	}
	b.dl.Lock()
	defer b.dl.Unlock()
	b.settled.Store(true)
	return b.interrupted
}
