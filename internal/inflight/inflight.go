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
	"hash/maphash"
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
	share int64 // see Init
	used  atomic.Int64
	peak  atomic.Int64
	// starting is what bodies read whole hold before they earned their
	// bound (see [Hold.Starting]): at most a quarter of the capacity.
	starting atomic.Int64
	nwait    atomic.Int32 // waiters registered; release wakes them when > 0

	// peers holds what the peers hold, by slot: each peer is charged in two
	// slots (see PeerOf) and holds the lesser of the two, so that a peer
	// is taken for another only when both its slots are shared (a sketch
	// that only ever refuses more, never less, and rarely: two peers of 32
	// share both slots once in about a thousand budgets). The seed is the
	// process's: a peer cannot choose a key that shares another's slots.
	peers [peerSlots]atomic.Int64

	// released counts the bytes given back, by second, for RetryAfter.
	rate releaseRate

	mu   sync.Mutex
	wake chan struct{} // closed by release when there are waiters; guarded by mu
}

// peerSlots is the number of slots of a Pool's table of peers: 1024
// slots of 8 bytes.
const peerSlots = 1024

// peerSeed hashes peer keys to slots.
var peerSeed = maphash.MakeSeed()

// Init sets the capacity of a new Pool p, in bytes, and the share of one
// peer: the most a peer may hold unless at least share bytes stay free
// for the others after it grows (0: cap/4). It is a function, not a
// method, so that it is not promoted into limits.InFlight.
func Init(p *Pool, n, share int64) {
	p.cap, p.share = n, share
	if share == 0 {
		p.share = n / 4
	}
}

// Share returns the share of one peer in bytes (see Init).
func (p *Pool) Share() int64 { return p.share }

// most returns the most a holder of the peers in slots can ever hold: the
// capacity for one that names no peer; for a peer, all but one share (or
// its share, if that is more), since it may grow past its share only
// while a share stays free.
func (p *Pool) most(slots Peers) int64 {
	if slots == (Peers{}) || p.share >= p.cap {
		return p.cap
	}
	return max(p.share, p.cap-p.share)
}

// A Peer names one peer by its two slots in a Pool's table (see PeerOf);
// the zero Peer names none.
type Peer [2]uint16

// PeerOf returns the Peer named key, for a [Hold]'s Peers: two slots drawn
// from one hash of key, starting at 1.
func PeerOf(key string) Peer {
	h := maphash.String(peerSeed, key)
	return Peer{uint16(h%peerSlots) + 1, uint16((h>>32)%peerSlots) + 1}
}

// PeerHolds returns what the peer named key holds in p (at most: the lesser
// of its two slots, which other peers may share). A function, not a method:
// see Init.
func PeerHolds(p *Pool, key string) int64 {
	pr := PeerOf(key)
	return min(p.peers[pr[0]-1].Load(), p.peers[pr[1]-1].Load())
}

// charge adds n to the slots of pr and returns what pr holds then.
func (p *Pool) charge(pr Peer, n int64) int64 {
	a := p.peers[pr[0]-1].Add(n)
	if pr[1] == pr[0] {
		return a
	}
	return min(a, p.peers[pr[1]-1].Add(n))
}

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

// tryAcquire takes n bytes for the peers in slots (zero: none) if they fit,
// and reports whether it did. They fit when the budget has room and,
// for a peer that would hold more than its share, when at least a share
// stays free for the others: so a peer alone may use all but one share,
// and a newcomer always finds a share free unless peers within their
// shares fill the budget.
func (p *Pool) tryAcquire(n int64, slots Peers, start bool) bool {
	if start && p.starting.Add(n) > p.cap/4 {
		p.starting.Add(-n)
		return false
	}
	over := false
	for _, pr := range slots {
		if pr != (Peer{}) && p.charge(pr, n) > p.share { // first: concurrent growths only refuse more
			over = true
		}
	}
	for {
		u := p.used.Load()
		if n > p.cap-u || (over && p.cap-(u+n) < p.share) {
			p.unpeer(n, slots)
			if start {
				p.starting.Add(-n)
			}
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

// unpeer gives back n bytes of the peers in slots.
func (p *Pool) unpeer(n int64, slots Peers) {
	for _, pr := range slots {
		if pr != (Peer{}) {
			p.charge(pr, -n)
		}
	}
}

// release gives back n bytes of the peers in slots (and of the starting
// room, if start) and wakes the waiters, if any.
func (p *Pool) release(n int64, slots Peers, start bool) {
	if n == 0 {
		return
	}
	p.unpeer(n, slots)
	if start {
		p.starting.Add(-n)
	}
	if p.used.Add(-n) < 0 {
		panic("inflight: released more than was held")
	}
	p.rate.add(n)
	if p.nwait.Load() > 0 {
		p.mu.Lock()
		if p.wake != nil {
			close(p.wake)
			p.wake = nil
		}
		p.mu.Unlock()
	}
}

// acquire takes n bytes for the peers in slots, waiting until they fit or
// ctx is done.
func (p *Pool) acquire(ctx context.Context, n int64, slots Peers) error {
	for {
		if p.tryAcquire(n, slots, false) {
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
		if p.tryAcquire(n, slots, false) {
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
