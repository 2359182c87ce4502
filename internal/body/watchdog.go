package body

import (
	"sync"
	"sync/atomic"
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

// watchdog holds the bodies whose deadline it keeps, and one timer armed
// for the earliest deadline it was told of. The timer is reset only for a
// deadline earlier than the one it is armed for: bodies of one budget
// arrive with later deadlines than the ones before, so under steady load
// the timer fires about once per Timeout, not once per request.
//
// A body is held in one of two places. Most are read in microseconds, by
// the request that opened them: such a body takes a free slot of the lane
// with one compare-and-swap and gives it back with another, so that no
// lock is taken for it (every whole-body request on every core would take
// it). A body that finds no free slot among a few, when more bodies are
// being read than the lane holds, goes to a min-heap by deadline, under
// mu. An expiry looks at each slot of the lane (a fixed number) and at the
// heap's first bodies only, not at every waiting body: clients that stall
// on purpose each expire on their own, and a scan of every waiting body
// per expiry would cost the process the square of their number.
type watchdog struct {
	lane [laneSlots]atomic.Pointer[Body]
	turn atomic.Uint32 // where the next body starts looking for a free slot
	// next is when the timer fires, in nanoseconds since epoch, 0 while it
	// is not armed. Stored under mu; loaded without it by add.
	next atomic.Int64

	mu       sync.Mutex
	heap     []*Body     // the bodies the lane had no room for, earliest deadline first; watchEntry.i is the place
	timer    *time.Timer // nil until the first body
	compares int         // deadline comparisons made (for tests)
	// laneRead, if set (by tests, on a watchdog of their own), runs when
	// fire has read a body from the lane's slot s and not yet taken it.
	laneRead func(s int)
}

const (
	laneSlots  = 64 // bodies watched without the lock
	laneProbes = 4  // slots a body tries before it takes the lock
)

// watchEntry is a body's place in the watchdog: its slot in the lane, or
// its place in the heap. add writes deadline and slot before the body is
// in either (the slot's compare-and-swap publishes them to fire); i and on
// are guarded by the watchdog's mu.
type watchEntry struct {
	deadline int64 // when the body's read is ended, in nanoseconds since epoch; > 0
	i        int32 // its index in the heap
	slot     uint8 // its slot in the lane, plus 1; 0: not in the lane
	on       bool  // in the heap
}

// epoch is the watchdog's origin of time: deadlines are kept as monotonic
// nanoseconds since it (16 bytes per body rather than 40).
var epoch = time.Now()

// sinceEpoch returns t as nanoseconds since epoch, saturated.
func sinceEpoch(t time.Time) int64 { return int64(t.Sub(epoch)) }

// watch is the process's watchdog of whole request bodies.
var watch watchdog

// add watches b until remove, ending its read at deadline d (nanoseconds
// since epoch; one at or before epoch is already past).
func (w *watchdog) add(b *Body, d int64) {
	b.watch.deadline = max(d, 1) // 0 is the timer's "not armed"
	d = b.watch.deadline
	turn := w.turn.Add(1)
	for k := range uint32(laneProbes) {
		s := (turn + k) % laneSlots
		if !w.lane[s].CompareAndSwap(nil, b) {
			continue
		}
		b.watch.slot = uint8(s + 1)
		// Read after the slot was taken: a fire that stored 0 before this
		// load reads the lane after it and sees b; one that did not yet
		// has the timer armed no later than d, and will.
		if t := w.next.Load(); t == 0 || t > d {
			w.mu.Lock()
			w.armBy(d)
			w.mu.Unlock()
		}
		return
	}
	w.mu.Lock()
	b.watch.on, b.watch.i = true, int32(len(w.heap))
	w.heap = append(w.heap, b)
	w.up(len(w.heap) - 1)
	w.armBy(d)
	w.mu.Unlock() // not deferred: nothing above panics
}

// remove stops watching b, and reports whether b was still watched: then
// the watchdog never came to it, and no interrupt of b ever comes. It is
// called once per add.
func (w *watchdog) remove(b *Body) (took bool) {
	if s := b.watch.slot; s > 0 {
		return w.lane[s-1].CompareAndSwap(b, nil) // lost: fire took it, to interrupt it
	}
	w.mu.Lock()
	if took = b.watch.on; took {
		w.take(int(b.watch.i))
	}
	w.mu.Unlock() // not deferred: nothing above panics
	return took
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

// armBy makes the timer fire at d (since epoch) at the latest; the caller
// holds mu.
func (w *watchdog) armBy(d int64) {
	if t := w.next.Load(); t == 0 || d < t {
		w.arm(d)
	}
}

// arm sets the timer to fire at t (since epoch, > 0); the caller holds mu.
func (w *watchdog) arm(t int64) {
	w.next.Store(t)
	in := time.Duration(t) - time.Since(epoch) // no overflow: t fits, the elapsed time is positive
	if w.timer == nil {
		w.timer = time.AfterFunc(in, w.fire)
		return
	}
	w.timer.Reset(in)
}

// fire ends the reads of the bodies past their deadline and arms the timer
// for the earliest deadline left; of the heap it looks at no body that is
// not due but the first. The bodies are interrupted after mu is released:
// interrupt takes the body's own lock, which the body holds while it
// removes itself.
func (w *watchdog) fire() {
	var due []*Body
	w.mu.Lock()
	// Disarmed before the lane is read: a body that takes a slot after
	// that arms the timer itself (see add).
	w.next.Store(0)
	now := int64(time.Since(epoch))
	var soonest int64 // 0: none
	for s := range w.lane {
		b := w.lane[s].Load()
		if b == nil {
			continue
		}
		if w.laneRead != nil {
			w.laneRead(s)
		}
		w.compares++
		switch d := b.watch.deadline; {
		case d > now:
			if soonest == 0 || d < soonest {
				soonest = d
			}
		case w.lane[s].CompareAndSwap(b, nil): // else its read ended meanwhile
			due = append(due, b)
		}
	}
	for len(w.heap) > 0 {
		w.compares++
		if d := w.heap[0].watch.deadline; d > now {
			if soonest == 0 || d < soonest {
				soonest = d
			}
			break
		}
		due = append(due, w.take(0))
	}
	if soonest != 0 {
		w.armBy(soonest)
	}
	w.mu.Unlock()
	for _, b := range due {
		b.interrupt()
	}
}

// watching reports how many bodies the watchdog holds (in the lane and the
// heap), and how many ended bodies the heap's array still points to, which
// must be none (for tests).
func (w *watchdog) watching() (n, stale int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.heap[len(w.heap):cap(w.heap)] {
		if b != nil {
			stale++
		}
	}
	for s := range w.lane {
		if w.lane[s].Load() != nil {
			n++
		}
	}
	return n + len(w.heap), stale
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
	if !b.src.Watched || b.settled.Load() {
		// Never watched (never interrupted), or settled before (the
		// read's end, then Close or Finish): interrupted no longer changes.
		return b.interrupted
	}
	return b.settle()
}

// settle is unwatch's work for a watched body not yet settled: out of the
// watchdog, or past an interrupt in progress. It reports whether the read
// was interrupted.
func (b *Body) settle() (interrupted bool) {
	if b.watched.Swap(false) && watch.remove(b) {
		// Out before the watchdog came to it: no interrupt comes, so none
		// can be in progress, and there is no need to wait on dl.
		b.settled.Store(true)
		return false
	}
	b.dl.Lock()
	defer b.dl.Unlock()
	b.settled.Store(true)
	return b.interrupted
}
