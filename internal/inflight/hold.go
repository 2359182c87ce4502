package inflight

import (
	"context"

	"github.com/boundhttp/boundhttp/internal/sat"
)

// A Hold is what one body holds of a [Pool]: the unit of the reservation
// scheme. The zero Hold, and a Hold of a nil Pool, charge nothing and never
// fail. A Hold is not safe for concurrent use; the Pool it charges is.
type Hold struct {
	p     *Pool
	held  int64
	peers Peers
	start bool // charges the starting room too (see Starting)
}

// Peers names the peers a Hold charges besides the Pool (see [PeerOf]; the
// zero Peer: none): on the server the client's connection and its address,
// on the client the host.
type Peers [2]Peer

// NewHold returns a Hold that charges p (nil: nothing).
func NewHold(p *Pool) Hold { return Hold{p: p} }

// SetPeers names the peers h charges from now on; h must hold nothing.
// A peer named twice counts once.
func (h *Hold) SetPeers(peers Peers) {
	if peers[1] == peers[0] {
		peers[1] = Peer{}
	}
	h.peers = peers
}

// Starting returns a new Hold of h's Pool and peers, holding nothing,
// whose charges also count against the Pool's starting room: a quarter of
// its capacity, for the bytes a body read whole reads ahead before it has
// earned its bound. A charge that does not fit the starting room fails as
// one that does not fit the Pool; a starting Hold never waits. A body that
// waits for its bound while it holds bytes read ahead waits for at most
// MostAfterStart, which makes the wait safe (see limits.InFlight).
func (h *Hold) Starting() Hold { return Hold{p: h.p, peers: h.peers, start: true} }

// Pool returns the Pool h charges, or nil.
func (h *Hold) Pool() *Pool { return h.p }

// Held returns the bytes h holds.
func (h *Hold) Held() int64 { return h.held }

// Most returns the most h can ever hold: the Pool's capacity, or for a Hold
// that names peers all but one share of it (see [Init]); 0 without a Pool.
func (h *Hold) Most() int64 {
	if h.p == nil {
		return 0
	}
	return h.p.most(h.peers)
}

// MostAfterStart returns the most h may wait for while its body holds
// bytes in the starting room (see Starting): what it can ever hold, less
// the starting room, and for a Hold that names peers less a share too (a
// waiter over its peer's share is granted only while a share stays free).
// Once every body that does not wait has ended, the waiters hold at most
// the starting room, so any waiter within this is granted: no cycle of
// waits can form, whatever the share.
func (h *Hold) MostAfterStart() int64 {
	if h.p == nil {
		return 0
	}
	c := h.p.cap - h.p.cap/4
	if h.peers != (Peers{}) && h.p.share < h.p.cap {
		c -= h.p.share
	}
	return max(min(c, h.Most()), 0)
}

// A Busy is a reservation that found no room: Need is what the Hold would
// have held (saturated at math.MaxInt64), Cap the most it can ever hold
// (the capacity, or all but one share of it for a peer; see Most), Err the
// context's error of a wait cut short (or nil). The engine turns it into a
// *limits.Error of stage inflight.
type Busy struct {
	Cap, Need int64
	Err       error
}

func (b *Busy) Error() string { return "inflight: budget busy" }

// Unwrap returns the context's error of a wait cut short, or nil.
func (b *Busy) Unwrap() error { return b.Err }

// Grow reserves n more bytes without waiting; n <= 0 reserves nothing. It
// fails with a [*Busy] when they do not fit now.
func (h *Hold) Grow(n int64) error {
	if h.p == nil || n <= 0 {
		return nil
	}
	if !h.p.tryAcquire(n, h.peers, h.start) {
		return h.busy(n, nil)
	}
	h.held += n
	return nil
}

// Wait reserves n bytes as Grow does, except that a Hold that holds nothing
// waits for room until ctx is done (ctx nil: no wait); the [*Busy] then
// wraps ctx.Err(). A Hold that holds bytes never waits, and n above what
// it can ever hold (see Most) fails at once: only holders that hold nothing wait, so no holder
// waits for the budget and no cycle of waits can form.
func (h *Hold) Wait(ctx context.Context, n int64) error {
	if h.p == nil || n <= 0 {
		return nil
	}
	if h.held != 0 || ctx == nil || n > h.Most() || h.start {
		return h.Grow(n)
	}
	if err := h.p.acquire(ctx, n, h.peers); err != nil {
		return h.busy(n, err)
	}
	h.held = n
	return nil
}

// Shrink gives back n of the bytes h holds (at most what it holds).
func (h *Hold) Shrink(n int64) {
	if h.p == nil || n <= 0 {
		return
	}
	n = min(n, h.held)
	h.held -= n
	h.p.release(n, h.peers, h.start)
}

// Split moves n of the bytes h holds (at most what it holds) into a new
// Hold of the same Pool, which gives them back on its own.
func (h *Hold) Split(n int64) Hold {
	n = max(min(n, h.held), 0)
	h.held -= n
	return Hold{p: h.p, held: n, peers: h.peers, start: h.start}
}

// Release gives back everything h holds. It is idempotent.
func (h *Hold) Release() {
	if h.p != nil && h.held != 0 {
		n := h.held
		h.held = 0
		h.p.release(n, h.peers, h.start)
	}
}

func (h *Hold) busy(n int64, cause error) *Busy {
	return &Busy{Cap: h.Most(), Need: sat.Add(h.held, n), Err: cause}
}
