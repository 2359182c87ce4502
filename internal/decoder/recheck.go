package decoder

import (
	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/sat"
	"github.com/boundhttp/boundhttp/limits"
)

// SameInFlight reports whether bodies of c and o charge the same in-flight
// budget (or both none).
func (c *Config) SameInFlight(o *Config) bool { return c.pool == o.pool }

// Recheck holds a body that another Reader already decoded, verified and
// counted (u; its decoded bytes in chunks) to b, for a second layer that
// takes the body over instead of decoding it again: the wire and decoded
// bytes against MaxWireBytes and MaxDecodedBytes, the characters against
// MaxDecodedRunes, and the body's overall ratio (past [limits.RatioGrace]
// decoded bytes) against MaxRatio. It returns the first breach, with the
// stage a Reader reports; Observed is what the body counted (the ratio
// rounded down, characters the Limit+1 that tripped, as a Reader reports
// them). Layers, windows and the timeout were the first Reader's to judge:
// the codings are gone. The overall ratio is weaker than a Reader's check
// on every read, which a body whose first part expands more fails.
func Recheck(u limits.Usage, chunks *chunk.List, b limits.Budget) *limits.Error {
	switch {
	case u.WireBytes > b.MaxWireBytes:
		return &limits.Error{Stage: limits.StageWire, Limit: b.MaxWireBytes, Observed: u.WireBytes}
	case u.DecodedBytes > b.MaxDecodedBytes:
		return &limits.Error{Stage: limits.StageDecoded, Limit: b.MaxDecodedBytes, Observed: u.DecodedBytes}
	case b.MaxRatio > 0 && u.DecodedBytes > limits.RatioGrace && float64(u.DecodedBytes) > b.MaxRatio*float64(u.WireBytes):
		return &limits.Error{Stage: limits.StageRatio, Limit: ratioLimit(b.MaxRatio),
			Observed: u.DecodedBytes / max(u.WireBytes, 1)}
	}
	if b.MaxDecodedRunes > 0 && u.DecodedBytes > b.MaxDecodedRunes {
		var runes int64
		for i := range chunks.Len() {
			runes += countRunes(chunks.Chunk(i))
		}
		if runes > b.MaxDecodedRunes {
			return &limits.Error{Stage: limits.StageRunes, Limit: b.MaxDecodedRunes, Observed: sat.Add(b.MaxDecodedRunes, 1)}
		}
	}
	return nil
}
