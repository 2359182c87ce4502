package boundhttp

import (
	"net/http"
	"sync/atomic"
	"time"
)

// Defaults of a [Transport] and of the base transport [NewBaseTransport]
// returns: what bounds a fetch in time and in memory outside the body's
// [limits.Budget]. They are sized for an agent's fetch tool: one document,
// a few MiB at most, from a server it does not trust.
const (
	// DefaultHeaderTimeout is the default of [Transport.HeaderTimeout]: 30
	// seconds from RoundTrip to the response headers, connecting, TLS,
	// sending the request and any 1xx responses included.
	DefaultHeaderTimeout = 30 * time.Second

	// DefaultBodyTimeout is the body time a [Transport] applies in
	// whole-body mode (and to redirect bodies) when Budget.Timeout is zero:
	// 60 seconds from the response headers to the verified end of the
	// body, enough for the default 4 MiB at about 560 kbit/s. A
	// [Middleware] applies it too, to a whole request body, from the moment
	// it starts reading it. In streaming mode a zero Budget.Timeout stays
	// "none": the caller (the handler) paces the body and bounds it with
	// the request's context.
	DefaultBodyTimeout = 60 * time.Second

	// DefaultMaxResponseHeaderBytes is the MaxResponseHeaderBytes of the
	// base transport: 256 KiB of response header (net/http's default is
	// 10 MiB), the most a mainstream browser accepts. Headers are not
	// charged to [limits.InFlight]: a response the caller holds keeps up to
	// about this much memory besides its body.
	DefaultMaxResponseHeaderBytes = 256 << 10

	// DefaultStreamWindow is the HTTP/2 receive window of one stream of
	// the base transport (HTTP2Config.MaxReceiveBufferPerStream; net/http's
	// default is 4 MiB): the most net/http buffers for a body nobody reads
	// yet, such as one waiting for room in [limits.InFlight], uncharged.
	// 256 KiB keeps a stream at about 5 MiB/s at 50 ms round trip.
	DefaultStreamWindow = 256 << 10

	// DefaultConnWindow is the HTTP/2 receive window of one connection of
	// the base transport (HTTP2Config.MaxReceiveBufferPerConnection;
	// net/http's default is 1 GiB): the most net/http buffers on one
	// connection for all its streams, uncharged. 64 MiB is more than 250
	// waiting streams (net/http's and most servers' stream limit) can hold
	// with DefaultStreamWindow each, so bodies being read never starve
	// behind bodies waiting for room.
	DefaultConnWindow = 64 << 20

	// DefaultWriteByteTimeout is the HTTP2Config.WriteByteTimeout of the
	// base transport: an HTTP/2 connection on which no byte could be
	// written for 15 seconds is closed. net/http answers a server's PINGs
	// while holding the connection's write lock, so without it a server
	// that stops reading freezes every stream of the connection.
	DefaultWriteByteTimeout = 15 * time.Second

	// DefaultPingInterval is the HTTP2Config.SendPingTimeout of the base
	// transport: after 30 seconds without a frame, a PING checks the
	// connection, and one that gets no answer within 15 seconds is closed.
	DefaultPingInterval = 30 * time.Second
)

// NewBaseTransport returns the base transport a [Transport] with a nil Base
// uses: a clone of [http.DefaultTransport] with DisableCompression set,
// MaxResponseHeaderBytes [DefaultMaxResponseHeaderBytes], HTTP/2 windows
// and timeouts ([DefaultStreamWindow], [DefaultConnWindow],
// [DefaultWriteByteTimeout], [DefaultPingInterval]), and connections that
// fail once they read more than [DefaultFramingRatio] socket bytes per body
// byte plus [DefaultFramingSlack] (its DialContext counts; replacing
// DialContext, or setting DialTLSContext, drops that bound). Start from it
// when a Base needs its own TLS, proxy or protocol settings, so that the
// bounds stay; a Base built from scratch has only what its builder sets.
// Each call returns a new transport with its own connection pool.
//
// Its ResponseHeaderTimeout is zero: the time to the response headers is
// the Transport's HeaderTimeout alone, so that raising it is enough (a
// second, shorter clock in the base would cut the response first, with
// net/http's error). Used without a Transport, it has no header timeout.
func NewBaseTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	tr.DialContext = countFraming(tr.DialContext)
	tr.ResponseHeaderTimeout = 0 // Transport.HeaderTimeout is the one clock
	tr.MaxResponseHeaderBytes = DefaultMaxResponseHeaderBytes
	h2 := new(http.HTTP2Config)
	if tr.HTTP2 != nil {
		*h2 = *tr.HTTP2
	}
	h2.MaxReceiveBufferPerStream = DefaultStreamWindow
	h2.MaxReceiveBufferPerConnection = DefaultConnWindow
	h2.WriteByteTimeout = DefaultWriteByteTimeout
	h2.SendPingTimeout = DefaultPingInterval
	tr.HTTP2 = h2
	return tr
}

// Test hooks: the defaults a Transport (and, for the body, a Middleware) applies, shortened by tests that
// prove them (export_test.go); nanoseconds.
var (
	headerTimeoutDefault atomic.Int64
	bodyTimeoutDefault   atomic.Int64
)

func init() {
	headerTimeoutDefault.Store(int64(DefaultHeaderTimeout))
	bodyTimeoutDefault.Store(int64(DefaultBodyTimeout))
}
