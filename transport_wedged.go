package boundhttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// A connection the Transport closes because it is wedged (see connWatch)
// stays in net/http's HTTP/2 pool until the connection's read loop has
// seen the close and marked it closed: a request that takes it from the
// pool in between is written to a closed socket and fails with "use of
// closed network connection", and net/http does not retry that error. The
// Transport remembers the connections it closed that way and sends a
// request again, on another connection, when it failed on one of them:
// the connection was closed before the request got it, so none of the
// request reached the peer, whatever its method.

// A request that got the connection before it was closed as wedged, and
// waited behind the connection's stuck write lock (HTTP/2 multiplexes every
// request onto it, and the pool keeps handing it out while it is wedged),
// fails the same way once the lock is freed by the close: none of it
// reached the peer either, as it wrote its headers only after the close
// (or never). The Transport watches when a request handed a connection
// that other requests are using (HTTP/2; GotConnInfo reports it reused and
// not idle: only there can a request wait behind another's wedge) writes
// its headers, and sends again a request that failed on a connection
// closed as wedged before it wrote them.

// wedgedMemory is how many connections closed as wedged a Transport
// remembers: the most recent ones. The pool drops such a connection
// microseconds after the close, so only a burst of more wedged closes than
// this within that time can make a request fail on one it forgot.
const wedgedMemory = 16

// wedgedResends is the most times a request that failed on a connection
// closed as wedged is sent again. One is nearly always enough: the read
// loop needs no I/O to notice the close, only to be scheduled.
const wedgedResends = 3

// wedgedConns remembers the connections a Transport closed as wedged; the
// zero value is empty. It holds up to wedgedMemory closed connections
// alive. Safe for concurrent use.
type wedgedConns struct {
	// any is set before the first connection is remembered: every request
	// asks, and a Transport that never closed one answers without the lock.
	any   atomic.Bool
	mu    sync.Mutex
	conns [wedgedMemory]net.Conn
	next  int
}

// add remembers c, forgetting the oldest one when full.
func (s *wedgedConns) add(c net.Conn) {
	s.any.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[s.next] = c
	s.next = (s.next + 1) % wedgedMemory
}

// has reports whether c was closed as wedged (and is still remembered).
func (s *wedgedConns) has(c net.Conn) bool {
	if !s.any.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.conns {
		if w != nil && w == c {
			return true
		}
	}
	return false
}

// send sends req, with ctx as its context, through the base transport,
// again (up to wedgedResends times, each on a rewound body) while it fails
// on a connection w reports as closed as wedged before the request got it.
// A request whose body cannot be rewound (no GetBody) is not sent again.
func (t *Transport) send(req *http.Request, ctx context.Context, w *connWatch) (*http.Response, error) {
	out := t.outgoing(req, ctx)
	_, w.writes.direct = t.baseTransport().(*http.Transport)
	for try := 0; ; try++ {
		w.handedWedged.Store(false)
		w.writes.live.Store(false)
		resp, err := t.baseTransport().RoundTrip(out)
		if err == nil || !(w.handedWedged.Load() || w.queuedOnWedged()) || try == wedgedResends || ctx.Err() != nil {
			return resp, err
		}
		next, ok := rewound(out)
		if !ok {
			return resp, err // the failure on the closed connection
		}
		out = next
	}
}

// rewound returns req ready to be sent again, its body rewound with
// GetBody, and reports whether it could be.
func rewound(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	out := *req
	out.Body = body
	return &out, true
}

// writeWatch records whether a request wrote its headers on a connection
// not (yet) closed as wedged.
type writeWatch struct {
	direct bool        // net/http's Transport is the Base: it calls the request's trace itself
	hooked atomic.Bool // the trace's WroteHeaders reports to live
	live   atomic.Bool // the headers were written while the connection was not closed as wedged
}

// watchWrites makes the request's trace report when the request wrote its
// headers (a hook already in the trace still runs). It costs one closure,
// so only requests that share a busy connection watch. The hook is set on
// the trace after the request was handed to the Base, so it is set only
// when the Base is net/http's Transport, which calls that trace itself: a
// Base that composed the trace into its own (another Transport, a tracing
// wrapper) copied its hooks before, would never call this one, and a
// request that did write its headers would seem not to have.
func (w *connWatch) watchWrites() {
	if !w.writes.direct || w.wedged == nil || w.trace == nil || w.writes.hooked.Swap(true) {
		return
	}
	prev := w.trace.WroteHeaders
	w.trace.WroteHeaders = func() {
		w.mu.Lock()
		c := w.conn
		w.mu.Unlock()
		if !w.wedged.has(c) {
			w.writes.live.Store(true)
		}
		if prev != nil {
			prev()
		}
	}
}

// queuedOnWedged reports whether the request's connection was closed as
// wedged before the request wrote its headers on it: the request waited
// behind the wedge, and none of it reached the peer.
func (w *connWatch) queuedOnWedged() bool {
	if w.wedged == nil || !w.writes.hooked.Load() || w.writes.live.Load() {
		return false
	}
	w.mu.Lock()
	c := w.conn
	w.mu.Unlock()
	return c != nil && w.wedged.has(c)
}
