package boundhttp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/limits"
)

// DefaultAcceptEncoding is the Accept-Encoding a [Transport] sends when
// neither it nor the request sets one: every coding it can bound. deflate
// comes last with a low weight because servers that send raw DEFLATE under
// that name exist, and such bodies are rejected (see package decoding).
const DefaultAcceptEncoding = "zstd, br, gzip, deflate;q=0.5"

// A Transport is an [http.RoundTripper] that hands callers only complete,
// verified, in-budget response bodies.
//
// It asks for the content-codings it can bound, decodes whatever coding a
// response declares and charges the body against the budget (see
// [limits.Budget] for each limit). A coding it cannot decode fails closed
// with [limits.StageEncoding]; the base transport never decodes on its own.
//
// In whole-body mode (the default) RoundTrip returns only after the body was
// read, decoded and verified, and a breach is an error from RoundTrip: a
// [*ResponseError] carrying the refused response's status and URL (which
// [http.Client] wraps in a *url.Error; both still match
// errors.As(err, **limits.Error) and the limits sentinels); the response is
// then not returned. The returned Body serves the complete decoded bytes
// from pooled memory that Close gives back (reads after Close fail);
// Content-Encoding and Content-Length are removed from the header,
// ContentLength is the decoded length and Uncompressed is true when a coding
// was removed.
//
// In streaming mode Body is a bounded decoding reader: a breach is a sticky
// [*limits.Error] from Read, io.EOF comes only after the verified end, and
// ContentLength is -1. Only the caller chooses streaming: the Streaming
// field, [WithStreaming] on a request's context, or a request that asked for
// a server-sent event stream itself (its Accept names text/event-stream, as
// MCP clients send) and got one. Nothing a server sends can switch a
// whole-body request to streaming: an event stream nobody asked for is read
// whole like any other body (and, having no end, trips the budget or
// Budget.Timeout).
//
// Every response with a body is charged, 4xx and 5xx included. Responses
// that cannot carry a body (HEAD, 204, 304) pass with http.NoBody as Body. A redirect (301, 302,
// 303, 307, 308 with a Location) is verified like any other body, but only
// when first read: [http.Client] reads up to 2 KiB of a redirect's body
// before following it, which then costs one whole-body decode within the
// same budget, and a redirect body closed unread costs nothing. Its
// ContentLength is -1 unless the body has no content-coding and declared
// its length. A 206 response with a content-coding is rejected with
// [limits.StageEncoding]: a byte range of an encoded representation cannot
// be decoded on its own; when a request has a Range header and no
// Accept-Encoding, the Transport asks for identity.
//
// A 101 Switching Protocols is not a body. Answering a request that asked
// to upgrade (Connection: upgrade and an Upgrade header), it is returned
// untouched, its Body the connection as net/http hands it over, and nothing
// in this package reads it as a body ([ResultOf], [Fetch] and [Preview]
// report it as failed). Answering any other request it is a protocol error:
// RoundTrip fails and closes the connection.
//
// A close-delimited body (HTTP/1.x, neither Content-Length nor chunked, so
// it ends when the server closes the connection) cannot be verified when no
// content-coding marks its end: a connection cut mid-body looks exactly like
// the end. By default such a body is rejected with [limits.StageIntegrity]
// and [ErrCloseDelimited] before any of it is read; with AllowCloseDelimited
// it is read and charged like any other, but [UsageOf] and [ResultOf] never
// report it as verified. A body with a content-coding (gzip, deflate, br,
// zstd) carries its own end marker and is verified whatever its framing,
// unless DecodeOptions allow several gzip members or zstd frames: a cut
// between two of them looks like the end too (see
// [decoding.WithMaxMembers]), so such bodies count as unmarked.
//
// Time is bounded by default. HeaderTimeout ([DefaultHeaderTimeout], 30 s)
// runs from RoundTrip to the response headers. Budget.Timeout runs from the
// moment the response headers arrive to the verified end of the body (in
// streaming mode, to io.EOF), so a server that stalls before the first body
// byte is cut off too; when it is zero, whole-body mode and redirect bodies
// get [DefaultBodyTimeout] (60 s), and a streaming body has none (the
// caller paces it; bound it with the request's context). A body that
// reaches its end after the deadline is rejected with
// [limits.StageTimeout]. Both clocks are per response: [http.Client]
// starts them anew at each redirect it follows (up to 10 by default, so
// about 11 times each in all); bound a whole fetch with
// http.Client.Timeout or the request's context. Every deadline
// (HeaderTimeout, Budget.Timeout, the request's context,
// http.Client.Timeout) ends RoundTrip, a Read in progress and Close within
// about one second of passing, whatever the peer
// does, but for a Close on a connection whose writes still move (at most
// 30 s, below): net/http gets 500 ms to end the body; then the Transport closes
// the body itself, and the connection the request got (as
// [httptrace.ClientTrace.GotConn] reports it) if a Read still waits in
// net/http or the Close does not return within 500 ms, and the connection
// wrote nothing in those 500 ms: net/http's HTTP/2 client holds the
// connection's write lock while it answers the PINGs of a peer that
// stopped reading, and such a wedged connection must not be handed to the
// next request. A connection whose writes still move is not wedged, however
// long the lock is held: an upload on a slow link beside the body (an MCP
// client's POST beside its event stream) writes one DATA frame of up to
// 512 KiB under it, and a Close then waits for the lock as it would
// without the Transport, looked at again every 500 ms, for at most 30 s
// (about two such frames at 280 kbit/s), after which the connection is
// closed all the same; the base's WriteByteTimeout ends writes that stop.
// Progress is the bytes the peer acknowledged (Linux) or the bytes written
// (elsewhere, in pieces of 16 KiB), seen on the connections of
// [NewBaseTransport]'s dialer; on other connections the wait alone
// decides. net/http's pool may still hand it out until it has
// noticed the close; a request that fails on it never reached the peer,
// and the Transport sends it again on another connection (up to 3 times),
// whatever its method, if its body can be rewound (nil, [http.NoBody] or
// GetBody set). So is a request that got the HTTP/2 connection before the
// close and waited behind its stuck write lock, having written nothing,
// when Base is an [*http.Transport] (nil included).
//
// What the budget does not count, framing overhead (HTTP/2 padding and
// empty DATA frames, chunk extensions, PINGs), is bounded by the
// connections of a nil Base, in every mode, streaming included: one that
// reads more than [DefaultFramingRatio] (32) socket bytes per body byte it
// delivers, beyond [DefaultFramingSlack] (1 MiB) when made and per request,
// fails every body and request on it with a [*limits.Error] of stage wire,
// Field "framing". What the server sends in answer to what the client
// writes (the WINDOW_UPDATE frames that pace an upload, ACKs) is not
// charged to a body: a connection may read one more byte per 16 it wrote,
// so uploads of any size pass, and a server that makes the client write
// (PINGs answered by ACKs) earns less than it spends. So a body costs at
// most 32 socket bytes per counted byte, plus 2 MiB, plus a sixteenth of
// what the client sent. CPU goes with frames rather than bytes: DATA frames of
// 1 byte (10 socket bytes each, within the bound) cost the client about
// 0.2-0.4 ms of CPU per KiB, up to about 1.5 s for a 4 MiB body, against
// about 2.5 µs per KiB in 16 KiB frames (loopback, measured); padding
// beyond the bound and empty DATA frames are cut off after about 2 MiB.
//
// Memory outside the budget is bounded by the base transport of a nil Base
// (see [NewBaseTransport]): response headers up to
// [DefaultMaxResponseHeaderBytes] per response, and net/http's HTTP/2
// buffers for bodies nobody reads yet (one waiting for room in InFlight)
// up to [DefaultStreamWindow] per stream and [DefaultConnWindow] per
// connection. None of these is charged to InFlight. A Base handed in has
// only the bounds its builder set.
//
// Close may be called from another goroutine while a Read of the body is in
// progress: it aborts that Read, which then fails, and the body's decoder
// and buffers go back to their pools only once the Read has returned. A
// body has one reader at a time; a second concurrent Read fails.
//
// A rejected body is closed without reading it further, so its connection is
// not reused.
//
// No error the Transport returns carries a peer's text unbounded: net/http's
// errors quote what a server sent (a malformed header line, an HTTP/2
// field name, GOAWAY debug data, a proxy's CONNECT reason phrase), and
// where such an error enters (RoundTrip's error from Base, a body's source)
// its text is cut to 256 bytes and escaped, while errors.Is, errors.As and
// Timeout still reach the original. With a [*limits.Error] around it the
// text stays under 2 KiB (plus a JSON Pointer's bounded tokens).
//
// The zero value is usable: the default budget, whole-body mode, the
// default timeouts, and a private base transport from [NewBaseTransport]. A
// Transport is safe for concurrent use; its fields must not change after
// first use (Budget, JSON, DecodeOptions and InFlight are checked and copied
// then: later changes are not seen).
type Transport struct {
	// Base carries the requests. Nil means a private transport from
	// [NewBaseTransport] (a clone of http.DefaultTransport with
	// DisableCompression, header, HTTP/2 window and write bounds); neither
	// http.DefaultTransport nor a Base handed in is modified. A Base must
	// not decode bodies itself: the Transport always sets Accept-Encoding,
	// which keeps http.Transport's transparent gzip off. The deadlines
	// reach a Base through the request's context, and its connections
	// through [httptrace.ClientTrace.GotConn]: a Base that sends the
	// request with another context is not ended by them before the
	// response headers, and a connection it does not report cannot be
	// closed when it wedges. A Base that is itself a Transport on the same
	// InFlight (or both on none) hands on whole bodies it verified: those
	// are taken over, not read or charged again, and only what this
	// Transport holds stricter applies (MaxWireBytes to the wire bytes the
	// Base counted, MaxDecodedBytes, MaxDecodedRunes, the overall MaxRatio,
	// JSON, AllowCloseDelimited); the Base's codings, windows and timeout
	// were the Base's to judge. Any other body of a Transport Base (a
	// streaming one, or one on another InFlight) is read and charged again;
	// its end is the one the Base verified, never taken for a
	// close-delimited body's (unless the Base accepted it as one).
	Base http.RoundTripper

	// HeaderTimeout caps the time from RoundTrip to the response headers:
	// connecting, TLS, sending the request (its body included) and any 1xx
	// responses. When it passes, RoundTrip fails with an error that matches
	// [ErrHeaderTimeout] and reports Timeout. Zero means
	// [DefaultHeaderTimeout]; negative is invalid (RoundTrip fails). Raise
	// it for uploads that take longer to send or servers slow to answer; a
	// Base's own ResponseHeaderTimeout still applies ([NewBaseTransport]
	// sets none). It does not cover the body (see Budget.Timeout).
	HeaderTimeout time.Duration

	// Budget is charged by every response body, unless the request's
	// context carries another one (see [WithBudget]).
	Budget limits.Budget

	// Streaming selects streaming mode instead of whole-body mode for every
	// request. See also [WithStreaming], for one request.
	Streaming bool

	// AllowCloseDelimited accepts HTTP/1.x bodies that end only when the
	// server closes the connection and whose codings do not mark their end
	// (no coding, or several members allowed): their end cannot be verified, so by default they are rejected with
	// [limits.StageIntegrity] and [ErrCloseDelimited]. When set, they are
	// read and charged like any other body, but their usage is never
	// reported as verified ([UsageOf] reports false, [ResultOf] reports
	// [StatusUnverified]).
	AllowCloseDelimited bool

	// AcceptEncoding is sent on requests that do not set Accept-Encoding
	// themselves. Empty means [DefaultAcceptEncoding]. A request's own
	// Accept-Encoding is never replaced.
	AcceptEncoding string

	// DecodeOptions are passed to the decoder of every body, for example
	// decoding.WithMaxMembers. They are checked at first use: an invalid
	// one fails every request, with the same error, before it is sent. A
	// decoding.WithInFlight among them is the same as the InFlight field
	// (both may name the same budget; two different budgets are an error).
	DecodeOptions []decoding.Option

	// JSON, if set, holds the shape of every JSON response body
	// (application/json, text/json, */*+json) to these limits, after
	// decoding and before the caller sees it: a breach is a *limits.Error of
	// stage json, a syntax error one of stage integrity. In streaming mode
	// the check runs as the body is read. Nil means no shape check.
	JSON *limits.JSON

	// InFlight is the process-wide budget every response body is
	// charged to, with the Middlewares and Readers that share it: decoder
	// state before it is allocated, and in whole-body mode the body, held
	// from its first byte (headers alone hold nothing) until the caller
	// closes the returned Body or
	// takes it with [ReadBody] (the bytes are then the caller's, uncharged;
	// see [limits.InFlight] and [decoding.WithInFlight]). A body that finds
	// no room waits until the request's context is done (or Budget.Timeout
	// elapses), then fails with a [*limits.Error] of stage inflight that
	// wraps the context's error (or the timeout, when Budget.Timeout ended
	// the wait: Timeout reports true either way); a body that could never
	// fit fails at once, stage inflight whatever the clocks say. Close every Body, or its charge is never given back. A caller
	// that holds one body while it fetches another through the same
	// InFlight should give that fetch a deadline (see [limits.InFlight]).
	// One host (by its name, in any spelling, and by the address its
	// connection reached, an IPv6 one by its /64) holds at most all but a
	// quarter of it, leaving a quarter for the others (see
	// [limits.NewInFlightShare]).
	// Nil means [DefaultClientInFlight], one budget of [DefaultInFlightBytes]
	// shared by every Transport that sets none (and names none in
	// DecodeOptions).
	InFlight *limits.InFlight

	once sync.Once
	base http.RoundTripper

	wedged wedgedConns // connections closed as wedged, for requests handed them

	cfgOnce sync.Once
	cfg     body.Config   // the engine's configuration, checked once
	budget  limits.Budget // Budget as it was checked, defaults applied
	cfgErr  error         // why the configuration is invalid, for every request
}

func (t *Transport) baseTransport() http.RoundTripper {
	t.once.Do(func() {
		if t.Base != nil {
			t.base = t.Base
			return
		}
		t.base = NewBaseTransport()
	})
	return t.base
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has such a method.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.baseTransport().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req and returns its response with the body charged
// against the budget. It does not modify req. An invalid configuration
// (Budget, JSON, DecodeOptions, InFlight) fails every request with the same
// error before anything is sent; a budget from [WithBudget] is checked per
// request, before it is sent too.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	cfg, b, err := t.budgetFor(req)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	tr := new(trip)
	rb := &tr.body // its usage record goes out with the request
	rb.Usage().SetCharCap(b.MaxDecodedRunes)
	conn := &tr.watch
	ctx = conn.watch(ctx, &tr.trace, &t.wedged)
	timer := t.startTripTimer(&tr.timer, cancel, conn)
	resp, err := t.send(req, tr.uctx.set(ctx, rb.Usage()), conn)
	if err = timer.stop(resp, err); err != nil {
		cancel()
		// net/http's errors quote what the peer sent (a malformed header
		// line, a proxy's reason phrase, GOAWAY debug data), megabytes of
		// it: the text is bounded here, the original stays reachable.
		return nil, peertext.Bound(err)
	}
	switch {
	case resp.StatusCode == http.StatusSwitchingProtocols:
		conn.upgraded() // the connection now carries another protocol
		return switched(req, resp, cancel)
	case !hasBody(req, resp):
		cancel()
		rb.Usage().Set(limits.Usage{}, true)
		return withoutBody(resp), nil
	}
	if ok, err := t.adopt(cfg, b, resp, rb, cancel); ok {
		if err != nil {
			return nil, err
		}
		return resp, nil
	}
	resp.Body = guardBody(&tr.guard, req.Context(), ctx, resp.Body, conn, timer)
	src := body.Source{Budget: b, Mode: t.mode(req, resp), Ctx: ctx, InFlightWait: -1, Cancel: cancel,
		Timer: timer.lend(rb, &tr.guard), Peers: hostPeers(req.URL, conn)}
	if src.Budget.Timeout == 0 && src.Mode != body.Stream {
		src.Budget.Timeout = time.Duration(bodyTimeoutDefault.Load()) // see DefaultBodyTimeout
	}
	if err := t.open(rb, cfg, resp, src); err != nil {
		return nil, refused(resp, nil, err)
	}
	switch src.Mode {
	case body.Stream:
		resp.ContentLength = -1
	case body.Lazy:
		if resp.Uncompressed {
			resp.ContentLength = -1 // the decoded length is not known yet
		}
	default:
		if err := rb.ReadAll(); err != nil {
			rb.Close()
			return nil, refused(resp, rb.Usage(), err)
		}
		resp.ContentLength = rb.Size()
	}
	resp.Body = rb
	return resp, nil
}

// trip is the state of one RoundTrip, allocated as one: its parts live as
// long as each other (the response body holds them all), and none is
// pooled.
type trip struct {
	body  body.Body
	watch connWatch
	trace httptrace.ClientTrace
	uctx  usageCtx
	timer tripTimer
	guard connBody
}

// mode returns how the body of resp reaches the caller: streamed when the
// caller chose it, verified whole on first read for a redirect, whole
// otherwise.
func (t *Transport) mode(req *http.Request, resp *http.Response) body.Mode {
	switch {
	case t.streams(req, resp):
		return body.Stream
	case isRedirect(resp):
		return body.Lazy
	}
	return body.Whole
}

// withoutBody gives a response that cannot carry a body (HEAD, 204, 304)
// http.NoBody, closing whatever body a base transport attached to it, so that
// no reader ever gets unbounded bytes from it.
func withoutBody(resp *http.Response) *http.Response {
	if resp.Body != nil && resp.Body != http.NoBody {
		resp.Body.Close()
	}
	resp.Body = http.NoBody
	return resp
}

// budgetFor returns the engine's configuration and the budget of req,
// defaults applied, or why req must not be sent.
func (t *Transport) budgetFor(req *http.Request) (*body.Config, limits.Budget, error) {
	cfg, err := t.config()
	if err != nil {
		return nil, limits.Budget{}, err
	}
	if rb, ok := BudgetFrom(req.Context()); ok {
		if err := rb.Validate(); err != nil {
			return nil, rb, err
		}
		return cfg, rb.WithDefaults(), nil
	}
	return cfg, t.budget, nil
}

// config translates the Transport's fields into the engine's
// configuration, once: an invalid field fails every request the same way.
// What it checked is what every request uses (the Budget and a copy of the
// JSON limits): a field changed after first use, or JSON limits changed
// through their pointer, never reach a body unchecked.
func (t *Transport) config() (*body.Config, error) {
	t.cfgOnce.Do(func() {
		t.cfgErr = t.Budget.Validate()
		if t.cfgErr == nil && t.HeaderTimeout < 0 {
			t.cfgErr = fmt.Errorf("boundhttp: Transport.HeaderTimeout is negative (%v)", t.HeaderTimeout)
		}
		if t.cfgErr == nil && t.JSON != nil {
			t.cfgErr = t.JSON.Validate()
		}
		if t.cfgErr != nil {
			return
		}
		t.budget = t.Budget.WithDefaults()
		t.cfg = body.Config{Side: body.Client}
		if t.JSON != nil {
			j := *t.JSON
			t.cfg.JSON = &j
		}
		t.cfg.Decoder, t.cfgErr = inflightOptions(t.DecodeOptions, t.InFlight, defaultClientInFlight)
		if t.cfgErr != nil {
			t.cfgErr = fmt.Errorf("boundhttp: Transport.DecodeOptions: %w", t.cfgErr)
		}
	})
	return &t.cfg, t.cfgErr
}

// outgoing returns the request to send: a shallow copy of req with ctx,
// and an Accept-Encoding that asks for the codings the Transport can bound.
func (t *Transport) outgoing(req *http.Request, ctx context.Context) *http.Request {
	out := req.WithContext(ctx) // a shallow copy
	if req.Header.Get("Accept-Encoding") != "" {
		return out
	}
	out.Header = req.Header.Clone()
	if out.Header == nil {
		out.Header = make(http.Header)
	}
	switch {
	case req.Header.Get("Range") != "":
		out.Header.Set("Accept-Encoding", "identity")
	case t.AcceptEncoding != "":
		out.Header.Set("Accept-Encoding", t.AcceptEncoding)
	default:
		out.Header.Set("Accept-Encoding", DefaultAcceptEncoding)
	}
	return out
}

// switched handles a 101 Switching Protocols: not a body. It is returned
// untouched to a request that asked to upgrade, and refused otherwise.
func switched(req *http.Request, resp *http.Response, cancel context.CancelFunc) (*http.Response, error) {
	cancel() // net/http has handed the connection to the response already
	if asksUpgrade(req.Header) {
		return resp, nil
	}
	resp.Body.Close()
	return nil, refused(resp, nil, errUnrequestedSwitch)
}

// open checks what the headers declare and opens rb on the body of resp as
// src describes (budget, mode, context), its timer started; on error resp's
// body is closed.
func (t *Transport) open(rb *body.Body, cfg *body.Config, resp *http.Response, src body.Source) error {
	fail := func(err error) error {
		src.Cancel() // the connection is closed, not drained
		resp.Body.Close()
		return err
	}
	if err := src.Budget.CheckContentLength(resp.ContentLength); err != nil {
		return fail(err)
	}
	ce := strings.Join(resp.Header.Values("Content-Encoding"), ",")
	var buf [2]string // the codings of all but unusual headers, on the stack
	codings := decoder.AppendCodings(buf[:0], ce)
	coded := len(codings) > 0
	if resp.StatusCode == http.StatusPartialContent && coded {
		// Encoding is the first coding, cut as limits.Error documents: the
		// header is the peer's and may be megabytes long.
		return fail(&limits.Error{Stage: limits.StageEncoding, Encoding: peertext.Cut(codings[0]), Err: errPartialCoded})
	}
	src.Body, src.Closer, src.Encoding = resp.Body, resp.Body, ce
	src.JSON = cfg.JSON != nil && isJSON(resp.Header.Get("Content-Type"))
	if !coded {
		src.SizeHint = resp.ContentLength
	}
	if err := rb.Open(cfg, &src); err != nil {
		return fail(err)
	}
	if closeDelimited(resp) && !verifiedByBase(resp.Body) {
		switch {
		case rb.EndMarked():
			rb.RequireMarkedEnd() // a connection closed before a byte proves nothing
		case !t.AllowCloseDelimited:
			rb.Close() // nothing was read; closes the source
			return fail(&limits.Error{Stage: limits.StageIntegrity, Err: ErrCloseDelimited})
		default:
			rb.Unverified()
		}
	}
	if coded {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.Uncompressed = true
	}
	return nil
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
