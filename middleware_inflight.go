package boundhttp

import (
	"net/http"
	"strconv"

	"github.com/boundhttp/boundhttp/limits"
)

// inflightRetryAfter is the Retry-After, in seconds, of a 503 answered
// because the in-flight budget was busy.
const inflightRetryAfter = 1

// inflightHeaders sets Retry-After on the answer to a body the budget may
// take later (not on one that could never fit).
func inflightHeaders(w http.ResponseWriter, e *limits.Error) {
	if e.Stage == limits.StageInFlight && e.Observed <= e.Limit {
		w.Header().Set("Retry-After", strconv.Itoa(inflightRetryAfter))
	}
}
