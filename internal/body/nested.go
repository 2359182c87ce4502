package body

import (
	"github.com/boundhttp/boundhttp/limits"
)

// Verified reports whether b is a whole body read to its verified end and
// not yet read from: what one Middleware hands on, which a Middleware
// nested inside it need not read, decode or charge again.
func (b *Body) Verified() bool {
	if err := b.g.enter(); err != nil {
		return false
	}
	defer b.leave(true) // nothing here can leave the state broken
	return b.Whole() && b.full && b.err == nil && b.i == 0 && b.off == 0
}

// CheckJSON holds a verified whole body (see [Body.Verified]) to l without
// reading it, and returns the breach or syntax error, or nil. The body's
// position and its charge do not change.
func (b *Body) CheckJSON(l limits.JSON) *limits.Error {
	if err := b.g.enter(); err != nil {
		return &limits.Error{Stage: limits.StageIntegrity, Err: err}
	}
	done := false
	defer func() { b.leave(done) }()
	err := checkChunks(b.chunks, l)
	done = true
	if err == nil {
		return nil
	}
	if le, ok := err.(*limits.Error); ok {
		return le
	}
	return &limits.Error{Stage: limits.StageIntegrity, Err: err}
}

// FinishIdle is Finish, reporting whether no Read, WriteTo or ReadAll was
// in progress: only then is the source free for the caller to read (a
// server draining the rest of a request body after its handler returned,
// which a handler still running, behind http.TimeoutHandler, may not have
// done with). Later Reads fail either way.
func (b *Body) FinishIdle() bool {
	old := b.g.state.Or(guardClosed)
	if old == 0 {
		b.release() // the first close, with no Read: the state is ours
	}
	return old&guardReading == 0
}
