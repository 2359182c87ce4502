package boundhttp

import (
	"encoding/json"
	"net/http"

	"github.com/boundhttp/boundhttp/limits"
)

// StatusFor returns the HTTP status that answers a rejection at stage s:
// 413 for the size stages, 415 for an unsupported coding, 400 for an
// integrity failure, 408 for a timeout.
func StatusFor(s limits.Stage) int {
	switch s.Sentinel() {
	case limits.ErrTooLarge:
		return http.StatusRequestEntityTooLarge
	case limits.ErrUnsupported:
		return http.StatusUnsupportedMediaType
	case limits.ErrTimeout:
		return http.StatusRequestTimeout
	}
	return http.StatusBadRequest
}

// Problem is the RFC 9457 problem details document of a rejected body, with
// the extension members stage, limit, observed and encoding. It never holds
// body content.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Stage    string `json:"stage"`
	Limit    int64  `json:"limit"`
	Observed int64  `json:"observed"`
	// Declared reports whether Observed is a declared size (a
	// Content-Length, a zstd frame's content size or window) rather than
	// bytes read.
	Declared bool   `json:"declared,omitempty"`
	Encoding string `json:"encoding,omitempty"`
}

// ProblemFor returns the problem document describing e.
func ProblemFor(e *limits.Error) Problem {
	status := StatusFor(e.Stage)
	return Problem{
		Type:     "urn:boundhttp:problem:" + string(e.Stage),
		Title:    http.StatusText(status),
		Status:   status,
		Detail:   e.Error(),
		Stage:    string(e.Stage),
		Limit:    e.Limit,
		Observed: e.Observed,
		Declared: e.Declared,
		Encoding: e.Encoding,
	}
}

// WriteProblem answers a rejected body with [StatusFor] its stage and an
// application/problem+json body ([ProblemFor]). It is the default
// [MiddlewareConfig.Reject].
func WriteProblem(w http.ResponseWriter, _ *http.Request, e *limits.Error) {
	p := ProblemFor(e)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(p)
}
