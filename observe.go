package boundhttp

import (
	"net/http"

	"github.com/boundhttp/boundhttp/limits"
)

// OutcomeKind says what became of a request body or a response.
type OutcomeKind string

// The kinds of [Outcome].
const (
	// OutcomeAccepted is a request body read to its verified end: handed
	// to the handler whole, or read to io.EOF by a streaming handler.
	OutcomeAccepted OutcomeKind = "accepted"
	// OutcomeRejected is a request body refused by a limit (answered 413,
	// 415, 400 or 408, or, in streaming mode, read as an error by the
	// handler).
	OutcomeRejected OutcomeKind = "rejected"
	// OutcomeBusy is a request body refused because the in-flight budget
	// had no room (stage inflight, answered 503).
	OutcomeBusy OutcomeKind = "busy"
	// OutcomeResponseBreach is a response over the response cap (stage
	// response: answered 500, or aborted).
	OutcomeResponseBreach OutcomeKind = "response_breach"
)

// An Outcome is what became of one request body, or of one response over
// the response cap, as the Middleware or ResponseCap reports it to an
// Observe hook, for metrics. Every string in it is bounded: Route is the
// ServeMux pattern when the request carries one, else the path in its
// bounded form ([limits.Echo]), so label values stay few where a mux
// pattern is known, and never carry unbounded client text.
type Outcome struct {
	Kind   OutcomeKind
	Method string // bounded, as the client sent it
	Route  string
	// Usage is what the body cost: for OutcomeAccepted the verified body's
	// wire and decoded bytes; zero otherwise (Err.Observed says how far a
	// rejected body got).
	Usage limits.Usage
	// Err is the rejection or breach, with its Stage, Limit and Observed;
	// nil for OutcomeAccepted. It is not to be kept past the hook's
	// return.
	Err *limits.Error
}

// Stage returns the stage of o.Err, or "" for an accepted body: a label
// value for metrics.
func (o Outcome) Stage() limits.Stage {
	if o.Err == nil {
		return ""
	}
	return o.Err.Stage
}

// observe reports an outcome to hook, if one is set.
func observe(hook func(Outcome), r *http.Request, kind OutcomeKind, u limits.Usage, e *limits.Error) {
	if hook == nil {
		return
	}
	if kind == OutcomeRejected && e != nil && e.Stage == limits.StageInFlight {
		kind = OutcomeBusy
	}
	hook(Outcome{Kind: kind, Method: limits.Echo(r.Method), Route: route(r), Usage: u, Err: e})
}
