package body

import (
	"errors"
	"sync/atomic"
)

// ErrClosed is returned by reads after Close, and by a Read that Close cut
// short (on the server, [Config.ClosedErr] takes its place).
var ErrClosed = errors.New("boundhttp: read on closed body")

// ErrConcurrentRead is returned by a Read that starts while another Read of
// the same body is in progress. A body, like any io.Reader, has one reader
// at a time; the guard turns the misuse into an error instead of a race on
// the decoder.
var ErrConcurrentRead = errors.New("boundhttp: concurrent Read on one body")

// guard gives a body's pooled state (decoder, buffers, chunks, JSON
// checker) an owner at every moment, when Close may come from another
// goroutine while a Read is in progress (the ordinary way to abort a read
// in Go, as net/http's own bodies and gzhttp's readGuard allow).
//
// A Read enters before it touches the state and leaves, with defer, after:
// a panic inside a decoder cannot leave the body marked reading. Close
// marks the body closed, aborts what a blocked Read waits on, and releases
// the state only if no Read is in progress; otherwise the Read, on leaving,
// releases it. Exactly one of them releases, after which nothing touches
// the state. The cost is one compare-and-swap and one atomic add per Read.
type guard struct {
	state atomic.Int32 // guardClosed | guardReading
}

const (
	guardClosed  = 1
	guardReading = 2
)

// enter marks a Read in progress, or reports why none may start.
func (g *guard) enter() error {
	if g.state.CompareAndSwap(0, guardReading) {
		return nil
	}
	if g.state.Load()&guardClosed != 0 {
		return ErrClosed
	}
	return ErrConcurrentRead
}

// leave ends the Read that enter admitted. It reports whether the body was
// closed while the Read was in progress, in which case the caller owns the
// state and must release it.
func (g *guard) leave() (release bool) {
	return g.state.Add(-guardReading) == guardClosed
}

// close marks the body closed. first reports whether this is the first
// call; release whether the caller owns the state and must release it (no
// Read was in progress).
func (g *guard) close() (first, release bool) {
	old := g.state.Or(guardClosed)
	return old&guardClosed == 0, old == 0
}

// closed reports whether close was called.
func (g *guard) closed() bool { return g.state.Load()&guardClosed != 0 }
