package boundhttp

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/boundhttp/boundhttp/limits"
)

// StatusOf returns the HTTP status that answers a rejection at stage s:
// 413 for the size stages, 415 for an unsupported coding, 400 for an
// integrity failure, 408 for a timeout, 503 for a busy in-flight budget,
// and 500 for [limits.StageResponse] (the handler's response broke the
// server's own cap: the server's fault, not the client's).
func StatusOf(s limits.Stage) int {
	if s == limits.StageResponse {
		return http.StatusInternalServerError
	}
	switch s.Sentinel() {
	case limits.ErrTooLarge:
		return http.StatusRequestEntityTooLarge
	case limits.ErrUnsupported:
		return http.StatusUnsupportedMediaType
	case limits.ErrTimeout:
		return http.StatusRequestTimeout
	case limits.ErrBusy:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// A Rejection is a [limits.Error] for JSON: the numbers of the breach and
// the peer-chosen strings in their bounded, escaped forms, never body
// content. It is the rejection of a [Result] and, with the members of RFC
// 9457, a [Problem].
type Rejection struct {
	Stage    limits.Stage `json:"stage"`
	Limit    int64        `json:"limit"`
	Observed int64        `json:"observed"`
	// Declared reports whether Observed is a declared size (a
	// Content-Length, a zstd frame's content size or window) rather than
	// bytes read.
	Declared bool `json:"declared,omitempty"`
	// Encoding is the coding involved, through [limits.Echo].
	Encoding string `json:"encoding,omitempty"`
	// Field names the limit that tripped where a stage has several (for
	// stage json "MaxDepth", "MaxArrayLen", "MaxStringLen",
	// "MaxObjectMembers", "MaxValues" or "MaxObjects"; "syntax" for a JSON
	// syntax error).
	Field string `json:"field,omitempty"`
	// Pointer is where in the JSON document the limit tripped, a JSON
	// Pointer (RFC 6901) in the bounded form of [limits.EchoPointer].
	Pointer string `json:"pointer,omitempty"`
	// Detail is the text of the error ([limits.Error.Error]), cut to 1024
	// bytes.
	Detail string `json:"detail"`
}

// RejectionOf returns the Rejection describing e. The peer-chosen strings
// of e (its coding, its JSON Pointer) appear only in the bounded, escaped
// forms of [limits.Echo] and [limits.EchoPointer], in the members and in
// Detail, so the document stays small whatever the peer's headers or keys
// held.
func RejectionOf(e *limits.Error) *Rejection {
	return &Rejection{
		Stage:    e.Stage,
		Limit:    e.Limit,
		Observed: e.Observed,
		Declared: e.Declared,
		Encoding: limits.Echo(e.Encoding),
		Field:    limits.Echo(e.Field),
		Pointer:  limits.EchoPointer(e.Pointer),
		Detail:   cutText(e.Error(), maxDetail),
	}
}

// A Problem is the RFC 9457 problem details document of a rejected body:
// type, title and status, with the members of its [Rejection] (stage,
// limit, observed, declared, encoding, field, pointer, detail) beside them
// as extension members. It never holds body content.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Rejection
}

// ProblemOf returns the problem document describing e: [StatusOf] its
// stage and [RejectionOf] e.
func ProblemOf(e *limits.Error) Problem {
	status := StatusOf(e.Stage)
	return Problem{
		Type:      "urn:boundhttp:problem:" + string(e.Stage),
		Title:     http.StatusText(status),
		Status:    status,
		Rejection: *RejectionOf(e),
	}
}

// maxDetail bounds a problem's Detail, whatever an underlying error says.
const maxDetail = 1024

// cutText returns s cut to at most max bytes, marked, as valid UTF-8.
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "...(cut)"
}

// WriteProblem answers a rejected body with [StatusOf] its stage and an
// application/problem+json body ([ProblemOf]). It is the default
// [MiddlewareConfig.Reject] and [ResponseCapConfig.Reject].
func WriteProblem(w http.ResponseWriter, _ *http.Request, e *limits.Error) {
	p := ProblemOf(e)
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(p)
}
