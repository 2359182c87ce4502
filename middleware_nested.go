package boundhttp

import (
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
)

// nested serves a request whose body ob an outer Middleware already read,
// decoded, verified and charged (a global Middleware around a mux, and
// another on one route): it reports false for any other engine body (one
// not whole, or already read from, or on the other side). The body
// is taken over ([body.Body.Adopt]), not read, decoded or charged again,
// whatever in-flight budget each layer names: the charge stays on the
// outer layer's budget, which holds it until the outer handler returns.
// Only what this Middleware holds stricter applies: its budget to the
// numbers the outer one counted, and its JSON check. The outer layer's
// Content-Length (the decoded size) is never checked as wire bytes.
func (m *middleware) nested(next http.Handler, w http.ResponseWriter, r *http.Request, ob *body.Body, b *limits.Budget) bool {
	json := m.body.JSON != nil && (m.cfg.JSONAlways || isJSON(r.Header.Get("Content-Type")))
	adopted, e := ob.Adopt(&m.body, *b, json)
	if !adopted {
		return false
	}
	if e != nil {
		m.reject(w, r, e, true) // the outer one read it
		return true
	}
	if m.cfg.Observe != nil {
		u, _ := UsageOf(r)
		observe(m.cfg.Observe, r, OutcomeAccepted, u, nil)
	}
	next.ServeHTTP(w, r)
	return true
}
