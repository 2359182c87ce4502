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
	for try := 0; ; try++ {
		w.handedWedged.Store(false)
		resp, err := t.baseTransport().RoundTrip(out)
		if err == nil || !w.handedWedged.Load() || try == wedgedResends || ctx.Err() != nil {
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
