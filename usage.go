package boundhttp

import (
	"context"
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
)

type usageKey struct{}

// withUsage returns ctx carrying a body's usage record, where [UsageOf] and
// [RequestUsage] find it.
func withUsage(ctx context.Context, u *body.Usage) context.Context {
	return context.WithValue(ctx, usageKey{}, u)
}

// UsageOf reports what the body of a response returned through a
// [Transport] cost so far: the wire bytes read off the connection and the
// decoded bytes handed on. It is true at every moment, also while another
// goroutine reads the body in streaming mode and after an early Close (then
// it reports what was read before the Close). The boolean reports whether
// the body was read to its verified end: in whole-body mode that is true as
// soon as RoundTrip returned, in streaming mode only after the caller read
// io.EOF. It is false for a close-delimited body accepted with
// [Transport.AllowCloseDelimited] (its end cannot be verified), for a 101
// Switching Protocols response (it has no body) and for responses that did
// not come through a Transport. Responses without a body (HEAD, 204, 304)
// report zero and true. UsageOf is safe for concurrent use.
//
// UsageOf works when the body was wrapped by [http.Client] (for example
// because of Client.Timeout) or by a RoundTripper around the Transport,
// since it also finds the record through resp.Request's context.
func UsageOf(resp *http.Response) (limits.Usage, bool) {
	if u := usageOf(resp); u != nil {
		return u.Get()
	}
	return limits.Usage{}, false
}

// usageOf finds the usage record of a response that came through a
// Transport, or nil.
func usageOf(resp *http.Response) *body.Usage {
	if resp == nil {
		return nil
	}
	if b, ok := resp.Body.(*body.Body); ok {
		return b.Usage()
	}
	if resp.Request != nil {
		if u, ok := resp.Request.Context().Value(usageKey{}).(*body.Usage); ok {
			return u
		}
	}
	return nil
}
