package boundhttp

import (
	"context"
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
)

type usageKey struct{}

// withUsage returns ctx carrying a body's usage record, where [UsageOf]
// finds it.
func withUsage(ctx context.Context, u *body.Usage) context.Context {
	return context.WithValue(ctx, usageKey{}, u)
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
