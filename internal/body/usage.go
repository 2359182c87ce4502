package body

import (
	"runtime"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/limits"
)

// Usage records what one body cost so far. It is written after every Read
// of a body and may be read from any goroutine at any moment, so it holds
// the numbers in atomics behind a sequence counter (a seqlock): a write
// costs a few atomic operations and no lock, and a reader never sees the
// wire bytes of one moment with the decoded bytes of another.
type Usage struct {
	seq     atomic.Uint64 // odd while a write is in progress
	wire    atomic.Int64
	decoded atomic.Int64
	done    atomic.Bool
	chars   atomic.Int64 // the character cap of the body's serialised form, or 0
}

// SetCharCap records the character cap (Budget.MaxDecodedRunes) that a
// Result made of the body holds its serialised form to; 0 means none.
func (c *Usage) SetCharCap(n int64) { c.chars.Store(n) }

// CharCap returns the cap SetCharCap recorded, or 0.
func (c *Usage) CharCap() int64 { return c.chars.Load() }

// Set records u and whether the body was read to its verified end.
// Concurrent writers are serialised (they never contend in practice: a
// body has one reader at a time).
func (c *Usage) Set(u limits.Usage, done bool) {
	for {
		s := c.seq.Load()
		if s&1 == 0 && c.seq.CompareAndSwap(s, s+1) {
			break
		}
		runtime.Gosched() // another write is in progress: a few stores
	}
	c.wire.Store(u.WireBytes)
	c.decoded.Store(u.DecodedBytes)
	c.done.Store(done)
	c.seq.Add(1)
}

// Get returns a consistent snapshot of the last Set.
func (c *Usage) Get() (limits.Usage, bool) {
	for {
		s := c.seq.Load()
		if s&1 == 0 {
			u := limits.Usage{WireBytes: c.wire.Load(), DecodedBytes: c.decoded.Load()}
			done := c.done.Load()
			if c.seq.Load() == s {
				return u, done
			}
		}
		runtime.Gosched() // a write is in progress: a few stores
	}
}
