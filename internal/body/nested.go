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
