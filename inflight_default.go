package boundhttp

import (
	"github.com/boundhttp/boundhttp/limits"
)

// DefaultInFlightBytes is the capacity of each of the two process-wide
// default budgets, [DefaultServerInFlight] and [DefaultClientInFlight]:
// room for 64 whole compressed bodies of the default 4 MiB at once, or 9
// brotli streams with the largest standard window (27.5 MiB of decoder
// state each), and at most that much memory held by bodies on each side
// whatever the load. One peer (a client, a host) holds at most all but a
// quarter of it, 192 MiB, leaving the quarter to the others (see
// [limits.NewInFlightShare]).
const DefaultInFlightBytes = 256 << 20

var (
	defaultServerInFlight = limits.NewInFlight(DefaultInFlightBytes)
	defaultClientInFlight = limits.NewInFlight(DefaultInFlightBytes)
)

// DefaultServerInFlight returns the process-wide budget that every
// Middleware whose [MiddlewareConfig.InFlight] is nil is charged to, so
// that process memory is bounded by default: without it, 32 connections
// that each send a few bytes of a brotli stream declaring a 16 MiB window
// and stall grow a server by hundreds of MiB. Its capacity is
// [DefaultInFlightBytes]. Read its [limits.InFlight.Peak] to size your
// own; to lift it, give the Middleware a budget of your own
// ([limits.NewInFlight] of the memory you can spare, math.MaxInt64 for no
// process-wide bound).
//
// The server's and the client's defaults are separate budgets, so that a
// handler holding its request body never waits for room its own fetches
// through a default Transport would need (see [limits.InFlight] on what
// its deadlock freedom does not cover).
func DefaultServerInFlight() *limits.InFlight { return defaultServerInFlight }

// DefaultClientInFlight returns the process-wide budget that every
// [Transport] whose InFlight is nil is charged to; see
// [DefaultServerInFlight] for its size and how to lift it. A body that
// finds no room waits until the request's context is done.
func DefaultClientInFlight() *limits.InFlight { return defaultClientInFlight }
