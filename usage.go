package boundhttp

import (
	"context"
	"net/http"
	"sync"

	"github.com/boundhttp/boundhttp/limits"
)

// usageCell records what one body cost, for [UsageOf].
type usageCell struct {
	mu   sync.Mutex
	u    limits.Usage
	done bool
}

func (c *usageCell) set(u limits.Usage, done bool) {
	c.mu.Lock()
	c.u, c.done = u, done
	c.mu.Unlock()
}

func (c *usageCell) get() (limits.Usage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.u, c.done
}

type usageKey struct{}

func withUsageCell(ctx context.Context, c *usageCell) context.Context {
	return context.WithValue(ctx, usageKey{}, c)
}

// UsageOf reports what the body of a response returned through a
// [Transport] cost: the wire bytes read off the connection and the decoded
// bytes handed on. The boolean reports whether the body was read to its
// verified end; in whole-body mode that is true as soon as RoundTrip
// returned, in streaming mode only after the caller read io.EOF. It returns
// false for responses that did not come through a Transport.
//
// UsageOf works when the body was wrapped by [http.Client] (for example
// because of Client.Timeout), since it also finds the record through
// resp.Request's context.
func UsageOf(resp *http.Response) (limits.Usage, bool) {
	if c := cellOf(resp); c != nil {
		return c.get()
	}
	return limits.Usage{}, false
}

// cellOf finds the usage record of a response that came through a
// Transport, or nil.
func cellOf(resp *http.Response) *usageCell {
	if resp == nil {
		return nil
	}
	if c, ok := resp.Body.(interface{ cell() *usageCell }); ok {
		return c.cell()
	}
	if resp.Request != nil {
		if c, ok := resp.Request.Context().Value(usageKey{}).(*usageCell); ok {
			return c
		}
	}
	return nil
}
