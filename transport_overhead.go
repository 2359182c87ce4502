package boundhttp

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/internal/sat"
	"github.com/boundhttp/boundhttp/limits"
)

// Framing overhead: what a connection carries besides the body bytes the
// budget counts (HTTP/2 frame headers and padding, empty DATA frames,
// chunk-size lines and extensions, TLS records, PINGs) costs CPU and
// socket bytes, and a hostile server can make it as large as it likes: 1
// byte of body in a DATA frame with 255 bytes of padding, or DATA frames
// with no body at all. The connections of the base transport
// [NewBaseTransport] returns count the bytes they read and fail once they
// pass DefaultFramingRatio times the body bytes handed on from them plus
// DefaultFramingSlack per connection and per request, plus one byte per
// writeCredit socket bytes the connection wrote: what a server sends in
// answer to what the client sends (the WINDOW_UPDATE frames that pace an
// upload, about 1 byte per 150 uploaded) is no overhead of a response
// body. So an honest upload of any size passes (net/http's server answered
// a POST with about 2 MiB of WINDOW_UPDATE frames per 300 MiB, which once
// failed it), while a server that makes the client write (a flood of
// PINGs, each answered by an ACK of the same size) earns a sixteenth of
// what it sends, and is cut off as before.
const (
	// DefaultFramingRatio is the most socket bytes a connection of the
	// base transport may read per body byte it delivers (wire bytes, as
	// MaxWireBytes counts them), beyond its slack: 32. A server that
	// flushes every body byte on its own (an HTTP/2 frame of 1 byte in a
	// TLS 1.3 record is 32 bytes) stays within it.
	DefaultFramingRatio = 32

	// DefaultFramingSlack is the socket bytes a connection of the base
	// transport may read, beyond DefaultFramingRatio per body byte, when
	// it is made (the TLS handshake, SETTINGS) and again for every request
	// it carries (response headers, up to [DefaultMaxResponseHeaderBytes],
	// and 1xx responses): 1 MiB.
	DefaultFramingSlack = 1 << 20
)

// framingConn is a connection of the base transport that counts the bytes
// it reads and fails, for good, once they pass its allowance:
// DefaultFramingSlack when it was made and per request it got (see
// connWatch), plus DefaultFramingRatio per body byte read from it, plus one
// byte per writeCredit bytes written to it. Every request and body on it
// then fails with the same *limits.Error (stage wire, Field "framing").
type framingConn struct {
	net.Conn
	read    atomic.Int64 // socket bytes read
	wrote   atomic.Int64 // socket bytes written
	writing atomic.Int32 // Writes in progress
	slack   atomic.Int64 // granted when made and per request
	body    atomic.Int64 // body bytes delivered from it
	err     atomic.Pointer[limits.Error]
	acks    *ackProbe // tells the bytes the peer acknowledged; nil where the system does not
	peer    string    // the peer key of the address it reached (see hostPeers)
}

// writeCredit is how many socket bytes a connection must write to earn one
// byte of reading beyond its framing allowance.
const writeCredit = 16

func (c *framingConn) Read(p []byte) (int, error) {
	if e := c.err.Load(); e != nil {
		return 0, e
	}
	n, err := c.Conn.Read(p)
	read := c.read.Add(int64(n))
	if allowed := c.allowed(); read > allowed {
		e := &limits.Error{Stage: limits.StageWire, Field: "framing", Limit: allowed, Observed: read}
		c.err.CompareAndSwap(nil, e)
		return 0, c.err.Load()
	}
	return n, err
}

// Write writes p, counting the bytes written. Where the system does not
// tell the bytes the peer acknowledged, it writes in pieces of at most
// writePiece bytes, so that a large Write (an HTTP/2 DATA frame of 512
// KiB) shows its progress as it goes.
func (c *framingConn) Write(p []byte) (int, error) {
	c.writing.Add(1)
	defer c.writing.Add(-1)
	if c.acks != nil {
		n, err := c.Conn.Write(p)
		c.wrote.Add(int64(n))
		return n, err
	}
	n := 0
	for n < len(p) { // bounded: every round writes or returns
		k, err := c.Conn.Write(p[n:min(len(p), n+writePiece)])
		n += k
		c.wrote.Add(int64(k))
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// writePiece is the most a framingConn that cannot see acknowledgements
// hands the socket in one Write: a TLS record's worth (16 KiB of data, with
// room for its header and tag), so that a TLS connection, which writes a
// record at a time, writes as before.
const writePiece = 16<<10 + 256

// progress returns how far the connection's writes have come: the bytes
// the peer acknowledged, where the system tells (Linux: TCP_INFO), which
// move as the peer reads even while one large Write waits (an HTTP/2 DATA
// frame of 512 KiB on a slow link); else the bytes written, counted piece
// by piece. It tells a connection whose writes are slow from one that is
// wedged (see connWatch.moving).
func (c *framingConn) progress() int64 {
	if c.acks != nil {
		if n, ok := c.acks.acked(); ok {
			return n
		}
	}
	return c.wrote.Load()
}

// mark returns the progress a look at the connection compares with later,
// or -1 when no Write is in progress (none can be stuck; the first look
// then takes the mark, see connWatch.moving): it costs a system call only
// where writes wait.
func (c *framingConn) mark() int64 {
	if c.acks != nil && c.writing.Load() == 0 {
		return -1
	}
	return c.progress()
}

// allowed returns the socket bytes the connection may read so far.
func (c *framingConn) allowed() int64 {
	// body counts bytes actually read: far below MaxInt64/32.
	return sat.Add(sat.Add(c.slack.Load(), c.body.Load()*DefaultFramingRatio), c.wrote.Load()/writeCredit)
}

// grant adds a request's slack.
func (c *framingConn) grant() { c.slack.Add(DefaultFramingSlack) }

// delivered records n body bytes read from the connection.
func (c *framingConn) delivered(n int) { c.body.Add(int64(n)) }

// countFraming wraps dial so that every connection it makes counts its
// framing overhead.
func countFraming(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		fc := &framingConn{Conn: c, acks: newAckProbe(c)}
		if a := c.RemoteAddr(); a != nil {
			fc.peer = peerAddr(addrHost(a.String()))
		}
		fc.grant()
		return fc, nil
	}
}

// framingOf returns the counting connection under c (a TLS connection is
// unwrapped through NetConn), or nil when c does not count.
func framingOf(c net.Conn) *framingConn {
	for range 4 {
		switch v := c.(type) {
		case *framingConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}
