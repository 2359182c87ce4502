package boundhttp

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/limits"
)

// usageCell records what one body cost so far, for [UsageOf]. It is written
// after every Read of a body and may be read from any goroutine at any
// moment, so it holds the numbers in atomics behind a sequence counter (a
// seqlock): a write costs a few atomic operations and no lock, and a reader
// never sees the wire bytes of one moment with the decoded bytes of another.
type usageCell struct {
	seq     atomic.Uint64 // odd while a write is in progress
	wire    atomic.Int64
	decoded atomic.Int64
	done    atomic.Bool
}

// set records u and whether the body was read to its verified end.
// Concurrent writers are serialised (they never contend in practice: a
// body has one reader at a time).
func (c *usageCell) set(u limits.Usage, done bool) {
	for {
		s := c.seq.Load()
		if s&1 == 0 && c.seq.CompareAndSwap(s, s+1) {
			break
		}
		runtime.Gosched() // another write is in progress: a few stores
	}
	c.wire.Store(u.WireBytes)
	c.decoded.Store(u.DecodedBytes)
	c.done.Store(done)
	c.seq.Add(1)
}

// get returns a consistent snapshot of the last set.
func (c *usageCell) get() (limits.Usage, bool) {
	for {
		s := c.seq.Load()
		if s&1 == 0 {
			u := limits.Usage{WireBytes: c.wire.Load(), DecodedBytes: c.decoded.Load()}
			done := c.done.Load()
			if c.seq.Load() == s {
				return u, done
			}
		}
		runtime.Gosched() // a write is in progress: a few stores
	}
}

type usageKey struct{}

func withUsageCell(ctx context.Context, c *usageCell) context.Context {
	return context.WithValue(ctx, usageKey{}, c)
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
