package boundhttp

import (
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
)

// nested serves a request whose body an outer Middleware already read,
// decoded, verified and charged (a global Middleware around a mux, and
// another on one route): it reports false for any other request. The body
// is not read, decoded or charged again; only what this Middleware's
// budget and shape check hold stricter applies: the wire and decoded
// bytes the outer one counted against this budget's MaxWireBytes and
// MaxDecodedBytes, and this JSON check if it has one. The outer layer's
// Content-Length (the decoded size) is never checked as wire bytes.
func (m *middleware) nested(next http.Handler, w http.ResponseWriter, r *http.Request, b limits.Budget) bool {
	ob, ok := r.Body.(*body.Body)
	if !ok || !ob.Verified() {
		return false
	}
	u, done := UsageOf(r)
	if !done {
		return false
	}
	var e *limits.Error
	switch {
	case u.WireBytes > b.MaxWireBytes:
		e = &limits.Error{Stage: limits.StageWire, Limit: b.MaxWireBytes, Observed: u.WireBytes}
	case u.DecodedBytes > b.MaxDecodedBytes:
		e = &limits.Error{Stage: limits.StageDecoded, Limit: b.MaxDecodedBytes, Observed: u.DecodedBytes}
	case m.body.JSON != nil && (m.cfg.JSONAlways || isJSON(r.Header.Get("Content-Type"))):
		e = ob.CheckJSON(*m.body.JSON)
	}
	if e != nil {
		m.reject(w, r, e)
		return true
	}
	observe(m.cfg.Observe, r, OutcomeAccepted, u, nil)
	next.ServeHTTP(w, r)
	return true
}
