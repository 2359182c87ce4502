package boundhttp

import (
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
)

// UsageOf reports what the body of m, a request a [Middleware] handed on or
// a response returned through a [Transport], cost so far: the wire bytes read off
// the connection and the decoded bytes handed on. The boolean reports
// whether the body was read to its verified end. One rule holds on both
// sides: a message without a body (Body nil or [http.NoBody]: a GET, HEAD,
// 204 or 304) reports zero and true, wherever it came from, since there is
// nothing to charge or verify.
//
// For a response returned through a [Transport], UsageOf is true at every
// moment, also while another goroutine reads the body in streaming mode and
// after an early Close (then it reports what was read before the Close).
// The boolean is true in whole-body mode as soon as RoundTrip returned, in
// streaming mode only after the caller read io.EOF. It is false for a
// close-delimited body accepted with [Transport.AllowCloseDelimited] (its
// end cannot be verified), for a 101 Switching Protocols response (it hands
// over a connection, not a body) and for responses with a body that did not
// come through a Transport. It works when the body was wrapped by
// [http.Client] (for example because of Client.Timeout) or by a
// RoundTripper around the Transport, since it also finds the record through
// resp.Request's context.
//
// For a request a [Middleware] handed a handler (the request the handler
// received, or one derived from it with WithContext or Clone), the
// boolean is true once the body verified: in whole-body mode before the
// handler runs, in streaming mode once the handler read io.EOF. It is false
// for a request with a body that did not come through a Middleware.
//
// UsageOf is safe for concurrent use.
func UsageOf[M *http.Request | *http.Response](m M) (limits.Usage, bool) {
	var c *body.Usage
	var b any
	switch m := any(m).(type) {
	case *http.Response:
		if m == nil {
			return limits.Usage{}, false
		}
		c, b = usageOf(m), m.Body
	case *http.Request:
		if m == nil {
			return limits.Usage{}, false
		}
		c, _ = m.Context().Value(usageKey{}).(*body.Usage)
		b = m.Body
	}
	switch {
	case c != nil:
		return c.Get()
	case b == nil || b == http.NoBody:
		return limits.Usage{}, true
	}
	return limits.Usage{}, false
}
