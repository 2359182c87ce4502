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

// watchdog holds the bodies whose deadline it keeps, in a list, and one
// timer armed for the earliest deadline it was told of. The timer is reset
// only for a deadline earlier than the one it is armed for: bodies of one
// budget arrive with later deadlines than the ones before, so under steady
// load the timer fires about once per Timeout, not once per request.
type watchdog struct {
	mu     sync.Mutex
	head   *Body       // the watched bodies, linked by watchEntry
	n      int         // how many
	timer  *time.Timer // nil until the first body
	target time.Time   // when the timer fires; zero: not armed
}

// watchEntry is a body's place in the watchdog's list; guarded by the
// watchdog's mu.
type watchEntry struct {
	prev, next *Body
	on         bool      // in the list
	deadline   time.Time // when the body's read is ended
}

// watch is the process's watchdog of whole request bodies.
var watch watchdog

// add watches b until remove, ending its read at deadline.
func (w *watchdog) add(b *Body, deadline time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := &b.watch
	e.deadline, e.on, e.prev, e.next = deadline, true, nil, w.head
	if w.head != nil {
		w.head.watch.prev = b
	}
	w.head = b
	w.n++
	if w.target.IsZero() || deadline.Before(w.target) {
		w.arm(deadline)
	}
}

// remove stops watching b; it is a no-op for a body not watched.
func (w *watchdog) remove(b *Body) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unlink(b)
}

// unlink takes b out of the list; the caller holds mu.
func (w *watchdog) unlink(b *Body) {
	e := &b.watch
	if !e.on {
		return
	}
	if e.prev != nil {
		e.prev.watch.next = e.next
	} else {
		w.head = e.next
	}
	if e.next != nil {
		e.next.watch.prev = e.prev
	}
	e.prev, e.next, e.on = nil, nil, false
	w.n--
}

// arm sets the timer to fire at t; the caller holds mu.
func (w *watchdog) arm(t time.Time) {
	w.target = t
	if w.timer == nil {
		w.timer = time.AfterFunc(time.Until(t), w.fire)
		return
	}
	w.timer.Reset(time.Until(t))
}

// fire ends the reads of the bodies past their deadline and arms the timer
// for the earliest deadline left. The bodies are interrupted after mu is
// released: interrupt takes the body's own lock, which the body holds
// while it removes itself.
func (w *watchdog) fire() {
	var due []*Body
	w.mu.Lock()
	now := time.Now()
	var next time.Time
	for b := w.head; b != nil; {
		e := &b.watch
		nb := e.next
		if !e.deadline.After(now) {
			w.unlink(b)
			due = append(due, b)
		} else if next.IsZero() || e.deadline.Before(next) {
			next = e.deadline
		}
		b = nb
	}
	w.target = time.Time{}
	if !next.IsZero() {
		w.arm(next)
	}
	w.mu.Unlock()
	for _, b := range due {
		b.interrupt()
	}
}

// watching reports how many bodies the watchdog holds (for tests).
func (w *watchdog) watching() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// interrupt ends a read of b that is still running at its deadline, by
// setting the connection's read deadline to the past, unless the read
// already ended or the body's life did.
func (b *Body) interrupt() {
	b.dl.Lock()
	defer b.dl.Unlock()
	if b.settled || b.g.closed() {
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
	}
	b.dl.Lock()
	defer b.dl.Unlock()
	b.settled = true
	return b.interrupted
}
