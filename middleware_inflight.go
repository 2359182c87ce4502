package boundhttp

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// inflightRetryAfter is the Retry-After, in seconds, of a 503 answered
// because the in-flight budget was busy.
const inflightRetryAfter = 1

// inflightConfig validates the InFlight fields of c and returns c with the
// decoding option that charges c.InFlight added to a copy of its
// DecodeOptions.
func inflightConfig(c MiddlewareConfig) (MiddlewareConfig, error) {
	if c.InFlightWait < 0 {
		return c, errors.New("boundhttp: MiddlewareConfig.InFlightWait is negative (" + c.InFlightWait.String() + ")")
	}
	if c.InFlight != nil {
		opts := make([]decoding.Option, 0, len(c.DecodeOptions)+1)
		c.DecodeOptions = append(append(opts, c.DecodeOptions...), decoding.WithInFlight(c.InFlight))
	}
	return c, nil
}

// inflightBody prepares d for the in-flight budget: its first reservation
// waits at most InFlightWait. It reports whether d charges a budget, in
// which case the caller must call d.Done when the handler has returned.
func (m *middleware) inflightBody(d *decoding.Reader, r *http.Request) bool {
	if m.cfg.InFlight == nil {
		return false
	}
	if m.cfg.InFlightWait > 0 {
		d.SetInFlightWait(r.Context(), m.cfg.InFlightWait)
	}
	return true
}

// inflightHeaders sets Retry-After on the answer to a body the budget may
// take later (not on one that could never fit).
func inflightHeaders(w http.ResponseWriter, e *limits.Error) {
	if e.Stage == limits.StageInFlight && e.Observed <= e.Limit {
		w.Header().Set("Retry-After", strconv.Itoa(inflightRetryAfter))
	}
}
