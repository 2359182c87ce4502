package body

import (
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// Adopt takes b over for another layer of the same side, configured by
// cfg with budget bud: a body that a layer below handed on (a Transport
// whose Base is another Transport, a Middleware inside another). It
// reports false, and changes nothing, unless b is a whole body read to its
// end and not yet read from. Then b is not read, decoded or charged again,
// its in-flight charge stays on the budget that b's own layer charged,
// whatever budget cfg charges (a caller that needs the same one checks
// [Body.SameInFlight] first), and only what bud and cfg hold stricter is
// checked:
// the numbers b counted (see [decoder.Recheck]) and, when json is set, the
// shape against cfg.JSON. The breach, if any, is returned; b stays open
// for its caller to Close. Reading b again instead would make the second
// layer wait for room in InFlight that only b's own charge, which it holds
// open, could free.
func (b *Body) Adopt(cfg *Config, bud limits.Budget, json bool) (bool, *limits.Error) {
	if err := b.g.enter(); err != nil {
		return false, nil
	}
	done := false
	defer func() { b.leave(done) }()
	if !b.Whole() || b.cfg.Side != cfg.Side || !b.full || b.err != nil || b.i != 0 || b.off != 0 {
		done = true
		return false, nil
	}
	u, _ := b.usage.Get()
	e := decoder.Recheck(u, &b.chunks, bud)
	if e == nil && json && cfg.JSON != nil {
		e = shapeError(checkChunks(b.chunks, *cfg.JSON))
	}
	done = true
	return true, e
}

// EndVerified reports whether b, a client body its Transport handed on,
// returns io.EOF only at a verified end: false for a close-delimited body
// accepted as such (see [Body.Unverified]). Its owner fixed that before
// handing b on: safe for concurrent use.
func (b *Body) EndVerified() bool { return b.cfg != nil && b.cfg.Side == Client && b.verified }

// SameInFlight reports whether b charges the in-flight budget that bodies
// of cfg charge (or both charge none). b's configuration is fixed once it
// is open: safe for concurrent use.
func (b *Body) SameInFlight(cfg *Config) bool { return b.cfg.Decoder.SameInFlight(&cfg.Decoder) }

// shapeError is the rejection of a shape check's error: its breach, or a
// syntax error as stage integrity.
func shapeError(err error) *limits.Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*limits.Error); ok {
		return e
	}
	return &limits.Error{Stage: limits.StageIntegrity, Err: err}
}
