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
// headers alone holds no room. At its first byte, the body's decoders are
// charged their state (see [decoding.WithInFlight] for the amounts and the
// points), and a body read whole reserves, in the same first reservation,
// room for its bound (its declared length, or what remains of
// MaxDecodedBytes). The bytes it buffers are charged against that room as
// they come; what it did not use is given back at its verified end.
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
// What a share does not bound: a body's first reservation, at its first
// byte, holds its whole bound (4 MiB and its decoder's state by default)
// for as long as its Timeout lets it stall, so peers at enough addresses
// (the default budget's 256 MiB over about 64 connections from four
// addresses or more) can still fill the budget for a byte each.
//
// # Reservations and deadlock freedom
//
// Only a body that holds nothing may wait for room (its first reservation,
// as long as its context, wait or Timeout allows); every later reservation
// (a second decoder, a larger window, a buffered body beyond its bound)
// fails at once with [ErrBusy] when there is no room. Hence every byte of
// the budget is held by a body that is not waiting for the budget: it
// progresses (its peer sends, its handler or caller finishes, or its
// Timeout or context ends it) and gives its bytes back without needing any
// other body to give anything first. The wait-for graph has no edge from a
// holder to the budget, so it has no cycle.
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
