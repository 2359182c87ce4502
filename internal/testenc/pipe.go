package testenc

import (
	"context"
	"net"
	"sync"
)

// A PipeListener is a net.Listener whose connections are net.Pipe ends: a
// server reachable from inside a testing/synctest bubble, where loopback
// sockets are not. Wrap, if set, wraps both ends of each connection (a
// buffered pipe, say); set it before the first Dial.
type PipeListener struct {
	Wrap  func(net.Conn) net.Conn
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

// NewPipeListener returns a PipeListener ready to Accept.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the server end of the next connection Dial makes.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; connections made stay open.
func (l *PipeListener) Close() error { l.once.Do(func() { close(l.done) }); return nil }

// Addr returns a placeholder address.
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// Dial is a DialContext: it returns the client end of a new connection,
// once the server accepted it (or ctx ended, or the listener closed).
func (l *PipeListener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	if l.Wrap != nil {
		c, s = l.Wrap(c), l.Wrap(s)
	}
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe.test:0" }
