package boundhttp

import (
	"context"
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
)

type usageKey struct{}

// usageCtx is a context carrying a body's usage record under usageKey,
// where [UsageOf] finds it: what context.WithValue would return, made to
// live inside the struct that owns the record instead of in an allocation
// of its own. Its Done, Err and Deadline are its parent's,
// so the context package sees through it to the parent's cancellation (no
// goroutine of its own is started for a context derived from it).
type usageCtx struct {
	context.Context
	u *body.Usage
}

// set makes c the context ctx carrying u, and returns it.
func (c *usageCtx) set(ctx context.Context, u *body.Usage) context.Context {
	c.Context, c.u = ctx, u
	return c
}

// Value returns the usage record for usageKey, else its parent's value.
func (c *usageCtx) Value(key any) any {
	if _, ok := key.(usageKey); ok {
		return c.u
	}
	return c.Context.Value(key)
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
