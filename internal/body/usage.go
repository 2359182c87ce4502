package body

import (
	"sync"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/limits"
)

// Usage records what one body cost so far. It is written after every Read
// of a body and may be read from any goroutine at any moment, so its
// numbers are written and read together under a lock: a reader never sees
// the wire bytes of one moment with the decoded bytes of another. A write
// is two locked instructions (the lock's and its release's), which a body
// pays once per Read; reads are rare (an observer, UsageOf).
type Usage struct {
	mu      sync.Mutex
	wire    int64        // under mu
	decoded int64        // under mu
	done    bool         // under mu
	chars   atomic.Int64 // the character cap of the body's serialised form, or 0
}

// SetCharCap records the character cap (Budget.MaxDecodedRunes) that a
// Result made of the body holds its serialised form to; 0 means none.
func (c *Usage) SetCharCap(n int64) { c.chars.Store(n) }

// CharCap returns the cap SetCharCap recorded, or 0.
func (c *Usage) CharCap() int64 { return c.chars.Load() }

// Set records u and whether the body was read to its verified end. It is
// safe for concurrent use.
func (c *Usage) Set(u limits.Usage, done bool) {
	c.mu.Lock()
	c.wire, c.decoded, c.done = u.WireBytes, u.DecodedBytes, done
	c.mu.Unlock() // not deferred: nothing above panics
}

// Get returns the last Set, both numbers of one moment.
func (c *Usage) Get() (limits.Usage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return limits.Usage{WireBytes: c.wire, DecodedBytes: c.decoded}, c.done
}
