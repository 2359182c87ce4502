package limits

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/boundhttp/boundhttp/internal/inflight"
)

// StageInFlight is the stage of a body refused because the process-wide
// [InFlight] budget had no room for it.
const StageInFlight Stage = "inflight" // bytes all bodies and decoders hold together

// ErrBusy classifies [StageInFlight] errors: the [InFlight] budget had no
// room. A busy error whose Observed exceeds its Limit could never fit; any
// other may succeed later.
var ErrBusy = errors.New("limits: in-flight budget exhausted")

// An InFlight is a process-wide budget of bytes in flight: what all bodies
// and decoders that charge it hold together at one moment (buffered bodies,
// decoder state). One InFlight is shared by any number of Transports,
// Middlewares and decoding Readers.
//
// The unit is bytes of memory held, whatever the coding; it counts what the
// library charges, not the heap: it does not cover the bytes of a body a
// caller copied elsewhere, a handler's own allocations, net/http's
// per-connection buffers, or pooled memory idle between bodies.
//
// # What is charged, and when
//
// Before its first body byte a body holds nothing: a peer that sends
// headers alone holds no room. A body read whole (the Middleware's, and
// the Transport's ReadBody, Fetch and Lazy bodies) then holds nothing
// until its first 512 bytes came (fewer for a small bound: 1/128 of it;
// the whole body, if shorter), and reads ahead, undecoded, holding the
// bytes it read (in chunks of at most twice their size) until its peer has
// sent 1/128 of its bound: its declared length or what remains of
// MaxDecodedBytes, a chunk, and the most its decoders' state can be charged
// (see [decoding.WithInFlight]). Only then, or once the body ended (its
// peer can no longer stall it), does it reserve that bound, and decode; a
// MaxWireBytes below 1/128 of the bound makes it read to the end (or to
// the byte past the limit, which fails it). So, while its peer stalls, a
// peer holds at most 128 bytes of the budget per byte of body it sent,
// whatever its coding, and nothing for a body that sent fewer than 512
// bytes (as the bound is reserved, the bytes read ahead are still held for
// a moment: a peer cannot keep that). Reading ahead changes how the bytes
// reach the decoder in reads, not which limits a body breaks; of a body
// that breaks two, the one met first may differ. A body
// with a Content-Length of at most 64 KiB and no coding reserves its one
// chunk after its first 512 bytes: 128 per byte at most too.
//
// A body read as a stream (the Transport's default, the Middleware's
// Streaming) decodes as its bytes come, and its decoders are charged their
// state from its first byte, as the codec allocates it: up to 64 KiB for
// gzip or deflate, 640 KiB and the declared window for zstd, and 3.5 MiB
// and 1.5 times the declared window for brotli (27.5 MiB for a 16 MiB
// window, in 12 bytes). That is the one charge a peer gets ahead of its
// bytes: per body, at most that state; per connection, that times the
// bodies it has open (one over HTTP/1.1, the streams the server allows over
// HTTP/2); for one peer, its share (below).
//
// Bytes read ahead count against a starting room of a quarter of the
// budget as well: when it is full, a new body reads nothing ahead and
// reserves its bound after its first 512 bytes (an exception to the ratio
// above, which peers can only bring about by holding a quarter of the
// budget in bytes read ahead for them: at least a third of it sent). A body whose bound exceeds what it may
// wait for (see below) does not read ahead either.
//
// # Shares of peers
//
// A body of the Transport or the Middleware names its peers: on the server
// the client's connection and its address, on the client the host (by its
// name, in any spelling) and the address its connection reached; an IPv6
// address counts by its /64. A peer may hold up to a share of the budget
// (by default a quarter), and more only while at least a share stays free
// for the others: so one peer alone may use all but one share, a body of a
// peer that needs more fails at once (it could never fit), and a request
// from another peer finds a share free unless peers within their shares
// fill the budget. See [NewInFlightShare]. Behind a proxy (or on a unix
// socket) every client has one address: together they may use all but a
// share.
//
// What all peers together can hold is the budget; per byte they sent,
// 128 for bodies read whole, plus the decoder state of the bodies they
// stream. Filling the default 256 MiB budget with bodies read whole takes
// 2 MiB of body bytes sent and held open until their Timeout, from at
// least two addresses.
//
// # Reservations and deadlock freedom
//
// A body may wait for room only where what it holds cannot stop another
// from finishing: its first reservation when it holds nothing, and the
// reservation of its bound when it holds only bytes read ahead, for at
// most the budget less the starting room and (for a body that names a
// peer) less a share: half the budget with the default share. Every later
// reservation (a second decoder, a larger window, a buffered body beyond
// its bound) fails at once with [ErrBusy] when there is no room. Bodies
// that wait while holding bytes read ahead hold at most the starting room,
// a quarter; every other byte of the budget is held by a body that is not
// waiting for the budget: it progresses (its peer sends, its handler or
// caller finishes, or its Timeout or context ends it) and gives its bytes
// back without needing any other body to give anything first. Once they
// have, all but the starting room is free, and a waiter over its peer's
// share still leaves a share free: each waiter fits, whatever the share,
// and no cycle of waits can form. A body whose bound is larger reads
// nothing ahead.
//
// What this argument does not cover is a holder that waits for something
// else that waits for the budget: a handler that holds its request body
// while it fetches through a Transport sharing the same InFlight, or a
// caller that holds one whole response body while it fetches the next.
// Bound such fetches with a context deadline, or give them their own
// InFlight.
//
// A server answers a busy body 503 with a Retry-After of when room is
// expected to free, from the last second's releases (a minute when nothing
// was given back: the holders are stalled, and their deadlines free it).
// Waiting is not fair among the bodies of one peer: a large waiter may be
// passed by small ones.
//
// An InFlight is safe for concurrent use. Reservations do not allocate; a
// wait that has to wait allocates one channel per wake-up.
type InFlight struct {
	pool // the accounting, which only the library's bodies reach
}

// pool names the embedded accounting core without exporting it.
type pool = inflight.Pool

// NewInFlight returns a budget of n bytes in flight, with the default share
// of a peer (n/4; see [NewInFlightShare]). It panics if n <= 0, as a
// configuration error: there is no "unlimited" InFlight (use none).
func NewInFlight(n int64) *InFlight { return NewInFlightShare(n, 0) }

// NewInFlightShare returns a budget of n bytes in flight in which one peer
// may hold share bytes, and more only while at least share bytes stay free
// for the other peers. Zero share means n/4; share >= n lets one peer take
// the whole budget. It panics if n <= 0 or share < 0, as a configuration
// error.
func NewInFlightShare(n, share int64) *InFlight {
	if n <= 0 || share < 0 {
		panic(fmt.Sprintf("limits: NewInFlightShare(%d, %d): capacity must be positive, share not negative", n, share))
	}
	f := new(InFlight)
	inflight.Init(&f.pool, n, share)
	return f
}

// Cap returns the capacity in bytes.
func (f *InFlight) Cap() int64 { return f.pool.Cap() }

// Share returns the bytes one peer may hold while others need room.
func (f *InFlight) Share() int64 { return f.pool.Share() }

// InUse returns the bytes held now.
func (f *InFlight) InUse() int64 { return f.pool.InUse() }

// Peak returns the most bytes ever held at one moment. It never exceeds Cap.
func (f *InFlight) Peak() int64 { return f.pool.Peak() }

// busyText is the Error text of a body that would fit the InFlight budget
// but not now.
func (e *Error) busyText() string {
	b := []byte("limits: inflight: budget busy: needs ")
	b = strconv.AppendInt(b, e.Observed, 10)
	b = append(b, " of limit "...)
	b = strconv.AppendInt(b, e.Limit, 10)
	b = append(b, " bytes"...)
	b = appendEncoding(b, e.Encoding)
	if e.Err != nil {
		b = append(b, ": "...)
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}
