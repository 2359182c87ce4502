package boundhttp

import (
	"net/http"
	"strconv"
	"time"

	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// inflightHeaders sets Retry-After on the answer to a body the budget may
// take later (not on one that could never fit): when the budget's state
// says room is expected to free (see [limits.InFlight]), in whole seconds,
// at least 1.
func inflightHeaders(w http.ResponseWriter, e *limits.Error, p *inflight.Pool) {
	if e.Stage == limits.StageInFlight && e.Observed <= e.Limit {
		after := time.Second
		if p != nil {
			after = max(inflight.RetryAfter(p, e.Observed), time.Second)
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(after/time.Second)))
	}
}
