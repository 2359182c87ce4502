// Package inflight is the accounting core of [limits.InFlight]: the bytes a
// budget holds, the wait for room, and the [Hold] through which one body
// charges it. It is internal: reservations are the engine's plumbing, and
// users only ever see the budget ([limits.NewInFlight], Cap, InUse, Peak).
//
// limits.InFlight embeds a [Pool] under an unexported alias, so that no
// method of Pool is promoted into the public API except through limits'
// own declarations; [Of] is the one way from a *limits.InFlight to its
// Pool. See limits.InFlight for the reservation scheme and why it cannot
// deadlock.
package inflight

import (
	"context"
	"sync"
	"sync/atomic"
)

// A Pool is the state of one in-flight budget. Its zero value has no
// capacity; [Init] sets it. Its only exported methods are the ones
// limits.InFlight declares itself (Cap, InUse, Peak): any other would be
// promoted into the public API. It is safe for concurrent use.
// Reservations do not allocate; a wait that has to wait allocates one
// channel per wake-up.
type Pool struct {
	cap   int64
	used  atomic.Int64
	peak  atomic.Int64
	nwait atomic.Int32 // waiters registered; release wakes them when > 0

	mu   sync.Mutex
	wake chan struct{} // closed by release when there are waiters; guarded by mu
}

// Init sets the capacity of a new Pool p, in bytes. It is a function, not a
// method, so that it is not promoted into limits.InFlight.
func Init(p *Pool, n int64) { p.cap = n }

// Cap returns the capacity in bytes.
func (p *Pool) Cap() int64 { return p.cap }

// InUse returns the bytes held now.
func (p *Pool) InUse() int64 { return p.used.Load() }

// Peak returns the most bytes ever held at one moment.
func (p *Pool) Peak() int64 { return p.peak.Load() }

// pool is the method through which [Of] finds the Pool of a type that
// embeds one: only this package can declare it, so only an embedded Pool
// provides it.
func (p *Pool) pool() *Pool { return p }

// An owner embeds a Pool: *limits.InFlight is the one.
type owner interface{ pool() *Pool }

// Of returns the Pool of f (a *limits.InFlight), or nil when f is nil. It is
// the one accessor from the public budget to its accounting.
func Of[T interface {
	owner
	comparable
}](f T) *Pool {
	var zero T
	if f == zero {
		return nil
	}
	return f.pool()
}

// tryAcquire takes n bytes if they fit, and reports whether it did.
func (p *Pool) tryAcquire(n int64) bool {
	for {
		u := p.used.Load()
		if n > p.cap-u {
			return false
		}
		if p.used.CompareAndSwap(u, u+n) {
			u += n
			for {
				pk := p.peak.Load()
				if u <= pk || p.peak.CompareAndSwap(pk, u) {
					return true
				}
			}
		}
	}
}

// release gives back n bytes and wakes the waiters, if any.
func (p *Pool) release(n int64) {
	if n == 0 {
		return
	}
	if p.used.Add(-n) < 0 {
		panic("inflight: released more than was held")
	}
	if p.nwait.Load() > 0 {
		p.mu.Lock()
		if p.wake != nil {
			close(p.wake)
			p.wake = nil
		}
		p.mu.Unlock()
	}
}

// acquire takes n bytes, waiting until they fit or ctx is done.
func (p *Pool) acquire(ctx context.Context, n int64) error {
	for {
		if p.tryAcquire(n) {
			return nil
		}
		p.mu.Lock()
		if p.wake == nil {
			p.wake = make(chan struct{})
		}
		ch := p.wake
		p.nwait.Add(1)
		p.mu.Unlock()
		// A release between the failed attempt and the registration saw no
		// waiter: try again now that release will see this one.
		if p.tryAcquire(n) {
			p.nwait.Add(-1)
			return nil
		}
		select {
		case <-ch:
			p.nwait.Add(-1)
		case <-ctx.Done():
			p.nwait.Add(-1)
			return ctx.Err()
		}
	}
}
