package boundhttp

import "sync"

// readGuard lets a body be closed from another goroutine while a Read is in
// progress, as net/http's own bodies allow, without handing pooled state
// (decoders, buffers, chunks) back while that Read can still touch it:
// Close marks the body closed at once, and the pooled state is released
// by Close only when no Read runs, else by that Read as it returns. A Read
// that starts after Close touches nothing. The zero value is an open body.
type readGuard struct {
	mu      sync.Mutex
	reading bool
	closed  bool
}

// enter starts a Read, or reports false when the body is closed.
func (g *readGuard) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.reading = true
	return true
}

// leave ends a Read and reports whether the Read must release the pooled
// state: Close ran while it was in progress.
func (g *readGuard) leave() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reading = false
	return g.closed
}

// close marks the body closed. It reports whether this is the first Close,
// and whether the caller releases the pooled state now (no Read runs).
func (g *readGuard) close() (first, release bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false, false
	}
	g.closed = true
	return true, !g.reading
}
