package boundhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/schema"
)

// Middleware returns middleware that charges every request body to b, with
// the stages, errors and boundary of [Transport]: a declared Content-Length
// above MaxWireBytes is answered 413 before a byte is read (and before
// "100 Continue" is sent); any content-coding the library supports is
// decoded and charged to MaxDecodedBytes; the handler sees the complete,
// verified, decoded body or is not called at all.
//
// Budget.Timeout bounds the time to read the body from the moment the
// middleware starts reading it (in streaming mode, from the handler's
// first Read), through [http.ResponseController] read deadlines (for a
// body read whole behind net/http's own writer, set only if its read is
// still running at the deadline, by one timer of the process, except in a
// testing/synctest bubble, where it is set up front; the body's end is
// checked against the deadline either way). A zero
// Timeout is [DefaultBodyTimeout] (60 s) in whole-body mode, as in a
// [Transport], so that stalled bodies cannot hold the in-flight budget as
// long as they like; in streaming mode it stays "none": the handler paces
// the body, and bounds it with its own deadline or context. A deadline
// set up front is cleared once the body verified, and replaced by the drain's
// after a rejection. Where the ResponseWriter does not support read
// deadlines (http.ErrNotSupported: a wrapper without Unwrap), the timeout
// is still checked between reads, and a whole body whose read stalls is
// answered 408 all the same, once no byte came for 1 s past the Timeout; the stalled read itself, and
// the body's in-flight share, last until it returns (the client sends or
// leaves, or the server's own ReadTimeout ends it: set one). In streaming
// mode the handler's Read waits for it.
//
// The server's own timeouts cover what the middleware cannot see. It runs
// once a request's headers are in: set [http.Server.ReadHeaderTimeout], or
// clients that send headers slowly hold connections as long as they like.
// [http.Server.ReadTimeout] ends a body read no read deadline reaches
// (behind a writer without Unwrap, and the drain of a rejected body there):
// set it above Budget.Timeout (by default [DefaultBodyTimeout]) plus the
// drain's 5 s. A shorter ReadTimeout (it runs from the request's first
// byte) ends a whole body's read first, answered 408 all the same with the
// time that passed as observed. IdleTimeout bounds
// keep-alive connections between requests. WriteTimeout is not relied on,
// and would end long-lived event streams (an MCP session's GET).
//
// On HTTP/1 a rejection closes the connection (Connection: close), and the
// unread rest of the body is drained after the answer, at most 64 MiB for
// at most 5 s and until no byte came for 1 s, as nginx's lingering close
// does, so that the answer reaches the client, or a proxy in front, before
// unread bytes make the kernel reset the connection. This holds whatever
// wraps the Middleware's writer (a status recorder without Unwrap,
// [http.TimeoutHandler]); a client that sends more than the drain takes is
// disconnected, after the half-close and short wait of
// [http.MaxBytesReader] where net/http's writer is reachable by Unwrap. A
// request that expects "100 Continue" is not drained unless its body was
// read (the 100 was then sent), nor, where a read deadline ends it, a body
// rejected for its Timeout. In streaming mode a
// handler that stops reading early is drained so too: its own answer
// arrives as it would without the middleware, also when it came from the
// handler's own [http.MaxBytesReader] (an MCP SDK's MaxRequestBodyBytes),
// whose limit net/http cannot see through the middleware's writer; a body
// so drained to its end leaves the keep-alive connection as net/http would
// (no read deadline, the next request's context live), one left unread
// closes it, as net/http closes it after 256 KiB unread. On HTTP/2 only
// the stream is refused.
//
// Nested, as a global Middleware around a mux and another on one route:
// the inner one finds the body the outer one verified whole, and does not
// read, decode or charge it to InFlight again, whatever InFlight each
// names (the charge stays on the outer one's, until its handler returns,
// and the inner one's InFlight is not checked); it applies only what it
// holds stricter: its MaxWireBytes and MaxDecodedBytes to the bytes the
// outer one counted, and its JSON check. A body the server's own reader fails on is answered
// too: a
// malformed chunk size or an HTTP/2 content-length its DATA disagrees with
// 400 (stage integrity), the limit of an outer [http.MaxBytesHandler] 413
// (stage wire); only a client that is gone gets no answer. In streaming mode
// the handler sees the breach first; see [MiddlewareConfig.Streaming].
//
// It panics if b is invalid, as a configuration error; use
// [NewMiddleware] to get the error instead. See [MiddlewareConfig] for
// per-route budgets, streaming, the codings accepted and custom rejections.
func Middleware(b limits.Budget) func(http.Handler) http.Handler {
	m, err := NewMiddleware(MiddlewareConfig{Budget: b})
	if err != nil {
		panic(err)
	}
	return m
}

// MiddlewareConfig is the fuller form of [Middleware].
type MiddlewareConfig struct {
	// Budget is charged by every request body, unless BudgetFor is set.
	// Its zero Timeout is [DefaultBodyTimeout] unless Streaming is set
	// (see [Middleware]).
	Budget limits.Budget

	// BudgetFor, if set, returns the budget of one request (a per-route
	// budget, say). A budget it returns that is invalid is answered 500 and
	// logged at level Error, to Logger or, if Logger is nil, to
	// slog.Default; the handler is not called.
	BudgetFor func(*http.Request) limits.Budget

	// Streaming hands the handler a bounded decoding reader instead of the
	// whole verified body. A breach is returned from Read as an error that
	// matches both *limits.Error and, for the byte stages (wire, decoded),
	// *http.MaxBytesError with errors.As (see [RequestBodyError]); io.EOF
	// comes only after the verified end. If the
	// handler has not written when it returns after a breach, the
	// middleware answers with the rejection.
	Streaming bool

	// Codings lists the request content-codings that are decoded. Nil means
	// all of [decoding.Supported]; an empty, non-nil list accepts identity
	// bodies only. A request with another coding is answered 415 with an
	// Accept-Encoding header listing these (RFC 9110 section 15.5.16).
	Codings []string

	// Reject writes the answer to a rejected body. Nil means
	// [WriteProblem]. It is called only when the handler has not written,
	// and also, with stage [limits.StageResponse], for a response over
	// MaxResponseBytes before anything of it was sent.
	Reject func(w http.ResponseWriter, r *http.Request, e *limits.Error)

	// Logger, if set, receives one record per rejection at level Warn, with
	// the stage, limit, observed bytes, coding, field and JSON Pointer (see
	// [Problem]), method and route; never any body bytes, and every string
	// the client chose in its bounded form ([limits.Echo]). The route is the
	// ServeMux pattern when the request already carries one (the middleware
	// sits inside the mux, or wraps a handler registered on it), else the
	// request's path. The middleware wrapping a ServeMux knows the pattern
	// only in streaming mode, from the handler's request once it has run;
	// a whole body is rejected before the mux runs, and its record has the
	// path.
	Logger *slog.Logger

	// Observe, if set, is called once for each request body with what
	// became of it ([Outcome]: accepted with its usage, rejected with stage,
	// limit and observed bytes, busy), and once for each response over
	// MaxResponseBytes, from the request's goroutine, before the answer is
	// written. Wire a metrics library to it in one line, as examples/metrics
	// does with Prometheus. Outcome.Route is the ServeMux pattern only where
	// the request carries one: install the Middleware on the mux's routes
	// (or use streaming mode) to label by pattern; a whole body checked by
	// a Middleware around the mux is reported before the mux runs, with its
	// path, which as a label can take as many values as clients send. It must not block, and must be safe for
	// concurrent use. Requests without a body are not reported. Nested
	// Middleware (one around the mux, one on a route) each report the
	// body they see: one hook set on both counts a body twice (accepted by
	// the outer, then accepted or rejected by the inner); set it on one
	// layer, or tell them apart in the hook.
	Observe func(Outcome)

	// DecodeOptions are passed to the decoder of every body; NewMiddleware
	// checks them. A decoding.WithInFlight among them is the same as the
	// InFlight field, InFlightWait included (both may name the same budget;
	// two different budgets are an error).
	DecodeOptions []decoding.Option

	// JSON, if set, holds the shape of every JSON request body to these
	// limits before the handler sees it: a breach is answered 413 with stage
	// json, its field and the JSON Pointer of where it tripped, a syntax
	// error 400 (stage integrity, field syntax). In streaming mode the check
	// runs as the handler reads. Nil means no shape check unless JSONAlways
	// is set.
	//
	// A body is JSON when its Content-Type names application/json,
	// text/json or a */*+json type, even with malformed parameters
	// ("application/json; charset"). The client chooses that header: a
	// client that omits it or sends text/plain skips the check. Set
	// JSONAlways where only JSON is accepted.
	JSON *limits.JSON

	// JSONAlways checks every request body as JSON, whatever its
	// Content-Type (absent, text/plain, malformed), so that no client can
	// skip the shape check by not declaring JSON: the setting for endpoints
	// that take nothing but JSON, such as an MCP server or a tool endpoint.
	// A body that is not JSON is then answered 400. With JSON nil, the
	// default limits of [limits.JSON] apply. Bodies are never refused for
	// their Content-Type alone: the handler (an MCP SDK, say) may still
	// answer 415.
	//
	// An empty body (no decoded bytes: Content-Length 0, an empty chunked
	// body, a compressed empty body) is no body, with or without
	// JSONAlways: it is not checked, and the handler decides what a
	// bodiless request means (an MCP SDK answers a bodiless POST itself).
	JSONAlways bool

	// ToolSchemas maps tool names to their input schemas (the inputSchema
	// of MCP tools served behind this middleware). NewMiddleware audits
	// them and logs one warning per tool, at start-up, whose input has no
	// ceiling or whose largest tools/call request does not fit Budget with
	// schema.DefaultHeadroom (see package schema). Logged to Logger, or to
	// slog.Default if Logger is nil. It does not change what is accepted.
	//
	// The audit checks against Budget only, also when BudgetFor is set: the
	// middleware cannot know which request path BudgetFor maps to the MCP
	// endpoint. With BudgetFor, set Budget to the budget of the MCP route
	// (it is then also the audit's), or audit that route's budget yourself
	// with [schema.AuditTool] and [schema.ToolReport.Check].
	ToolSchemas map[string]json.RawMessage

	// MaxResponseBytes is the most response body bytes a handler may write:
	// the cap of [ResponseCapConfig.MaxBytes] (see there for what it holds,
	// refuses, aborts and does not cover), installed inside the request
	// body's checks, with Reject and Logger as its own. Zero means no
	// response cap, and the handler's writer is not wrapped for it;
	// negative is a configuration error. It is off by default because it
	// bounds the server's own output, whose right size depends on the route
	// (a download against a JSON answer), and a wrong default would turn
	// working handlers into 500s and aborted responses. For a response cap
	// without a request-body budget, use [ResponseCap].
	MaxResponseBytes int64

	// InFlight is the process-wide budget every request body is
	// charged to, with the Transports and Readers that share it, from the
	// body's first byte (headers alone hold nothing): decoder state before
	// it is allocated, and in whole-body mode the buffered body, held until
	// the handler returns or takes it with [ReadBody] (the bytes are then
	// the handler's, uncharged; see [limits.InFlight] and
	// [decoding.WithInFlight]). A client (its connection, and its address)
	// holds at most a quarter of it while others need room (see
	// [limits.NewInFlightShare]). A body that finds no room is answered 503
	// with a Retry-After of when room is expected to free, and the problem
	// document of stage inflight; the
	// handler is not called (in streaming mode it reads the error, as for
	// any breach). Not charged: net/http's own per-connection memory (about
	// 16 KiB measured: read and write buffers, request and connection
	// structures, the goroutine's stack), and what a handler does with the
	// body. A stalled body holds its share until it ends: in whole-body
	// mode for at most Budget.Timeout (by default [DefaultBodyTimeout]), in
	// streaming mode for as long as the handler waits. Nil means [DefaultServerInFlight], one budget of
	// [DefaultInFlightBytes] shared by every Middleware that sets none
	// (and names none in DecodeOptions).
	InFlight *limits.InFlight

	// InFlightWait is how long a body waits for room in InFlight before it
	// is refused. Zero means no wait; negative is an error. Only a body's
	// first reservation, and a whole body's reservation of its bound after
	// it read ahead, wait; see [limits.InFlight] for why that cannot
	// deadlock.
	InFlightWait time.Duration

	// Peer, if set, names the client a request body's in-flight share is
	// counted for, besides its connection (see [limits.NewInFlightShare]):
	// behind a proxy, the client address the proxy forwards (the hop it
	// added to X-Forwarded-For, say), so that the clients it carries are
	// told apart; "" counts the connection alone. Nil means the address of
	// r.RemoteAddr, which behind a proxy (or on a unix socket) is one for
	// every client: together they may then use all but a share. It must be
	// safe for concurrent use; what it returns is a key, never echoed.
	Peer func(r *http.Request) string
}

// NewMiddleware returns the middleware c describes, or an error if c.Budget,
// c.JSON, an option in c.DecodeOptions or a coding in c.Codings is invalid.
func NewMiddleware(c MiddlewareConfig) (func(http.Handler) http.Handler, error) {
	if err := c.Budget.Validate(); err != nil {
		return nil, err
	}
	if c.JSON != nil {
		if err := c.JSON.Validate(); err != nil {
			return nil, err
		}
	}
	if c.InFlightWait < 0 {
		return nil, errors.New("boundhttp: MiddlewareConfig.InFlightWait is negative (" + c.InFlightWait.String() + ")")
	}
	// An invalid option would fail every request: fail here instead.
	dc, err := inflightOptions(c.DecodeOptions, c.InFlight, defaultServerInFlight)
	if err != nil {
		return nil, fmt.Errorf("boundhttp: MiddlewareConfig.DecodeOptions: %w", err)
	}
	codings, err := acceptedCodings(c.Codings)
	if err != nil {
		return nil, err
	}
	if c.MaxResponseBytes < 0 {
		return nil, fmt.Errorf("boundhttp: MiddlewareConfig.MaxResponseBytes is negative (%d)", c.MaxResponseBytes)
	}
	auditTools(c)
	m := &middleware{cfg: c, budget0: c.Budget.WithDefaults(), codings: codings, acceptEncoding: strings.Join(append(slices.Clip(codings), "identity"), ", ")}
	m.body = body.Config{Side: body.Server, Decoder: dc,
		Wrap: wrapBreach, ClosedErr: http.ErrBodyReadAfterClose}
	if c.JSON != nil || c.JSONAlways {
		// A copy: limits changed through the caller's pointer later would
		// reach the bodies unchecked.
		m.body.JSON = new(limits.JSON)
		if c.JSON != nil {
			*m.body.JSON = *c.JSON
		}
	}
	if m.cfg.Reject == nil {
		m.cfg.Reject = WriteProblem
	}
	return func(next http.Handler) http.Handler {
		if c.MaxResponseBytes > 0 {
			next = newResponseCap(ResponseCapConfig{MaxBytes: c.MaxResponseBytes, Reject: c.Reject, Logger: c.Logger, Observe: c.Observe}).wrap(next)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.serve(next, w, r) })
	}, nil
}

// acceptedCodings returns the codings named by MiddlewareConfig.Codings,
// each as [decoding.ParseContentEncoding] names it, or an error for a name
// that is not one coding the package decodes.
func acceptedCodings(names []string) ([]string, error) {
	if names == nil {
		return decoding.Supported(), nil
	}
	codings := make([]string, 0, len(names))
	for _, name := range names {
		c := decoding.ParseContentEncoding(name)
		if len(c) != 1 || !decoding.IsSupported(c[0]) {
			return nil, fmt.Errorf("boundhttp: MiddlewareConfig.Codings: %q cannot be decoded", strings.ToLower(strings.TrimSpace(name)))
		}
		codings = append(codings, c[0])
	}
	return codings, nil
}

type middleware struct {
	cfg            MiddlewareConfig
	budget0        limits.Budget // cfg.Budget with its defaults
	codings        []string
	acceptEncoding string
	body           body.Config // the engine's configuration of every body
}

// serve charges the request's body and hands it on, in stages: the
// budget; the declared length and codings, with the body's deadline
// started first; then the body, whole or streamed, and the answer to a
// breach.
func (m *middleware) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	b := m.budget0
	if m.cfg.BudgetFor != nil && !m.routeBudget(w, r, &b) {
		return
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		// No body, whatever the codings, on every protocol: net/http's
		// HTTP/1 server gives a declared length of 0 http.NoBody, its
		// HTTP/2 server a reader that holds it to 0 bytes.
		next.ServeHTTP(w, r)
		return
	}
	if ob, ok := r.Body.(*body.Body); ok && m.nested(next, w, r, ob, &b) {
		return
	}
	if b.Timeout == 0 && !m.cfg.Streaming {
		b.Timeout = time.Duration(bodyTimeoutDefault.Load()) // see DefaultBodyTimeout
	}
	x := m.start(w, r, &b)
	if e := x.admit(&b); e != nil {
		m.reject(w, r, e, x.src.asked.Load())
		return
	}
	defer x.body.Finish() // the handler has returned: its body is done with
	if m.cfg.Streaming {
		x.stream(next)
	} else {
		x.whole(next)
	}
}

// statesLength reports whether h holds Content-Length exactly once, as the
// decimal n: only then may the handler share it. r.ContentLength alone is
// not enough; a header "005", a repeated one, or one left stale by an outer
// handler that replaced the body would reach the handler unchanged.
func statesLength(h http.Header, n int64) bool {
	cl := h["Content-Length"]
	return len(cl) == 1 && isDecimal(cl[0], n)
}

// isDecimal reports whether s is n (>= 0) written in decimal as
// strconv.FormatInt writes it: digits only, no sign, no leading zero.
func isDecimal(s string, n int64) bool {
	if n < 0 || len(s) == 0 || len(s) > 19 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	var v uint64 // 19 digits fit: no overflow; read, not divided, digit by digit
	for i := range len(s) {
		d := s[i] - '0'
		if d > 9 {
			return false
		}
		v = v*10 + uint64(d)
	}
	return v == uint64(n)
}

// routeBudget sets *b to BudgetFor's budget of r with its defaults, or
// answers 500 and reports false when that budget is invalid.
func (m *middleware) routeBudget(w http.ResponseWriter, r *http.Request, b *limits.Budget) bool {
	rb := m.cfg.BudgetFor(r)
	if err := rb.Validate(); err != nil {
		m.logger().Error("boundhttp: invalid per-route budget", "err", err, "route", route(r))
		http.Error(w, "invalid body budget", http.StatusInternalServerError)
		return false
	}
	*b = rb.WithDefaults()
	return true
}

// auditTools logs the tools whose input the budget cannot carry.
func auditTools(c MiddlewareConfig) {
	if len(c.ToolSchemas) == 0 {
		return
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	names := make([]string, 0, len(c.ToolSchemas))
	for name := range c.ToolSchemas {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r, err := schema.AuditTool(name, c.ToolSchemas[name], schema.Options{})
		if err == nil {
			err = r.Check(c.Budget, schema.DefaultHeadroom)
		}
		if err != nil {
			log.Warn("boundhttp: tool input does not fit the body budget", "tool", name, "err", err)
		}
	}
}

// reject answers a rejected body, then drains what is left of it; asked
// reports whether the body was read (see drainAfterRejection).
func (m *middleware) reject(w http.ResponseWriter, r *http.Request, e *limits.Error, asked bool) {
	m.answer(w, r, e, true, asked)
}

// answer reports, logs and answers a rejected body; with drain, the rest
// of the body is drained after the answer (see drainAfterRejection, and
// there for asked).
func (m *middleware) answer(w http.ResponseWriter, r *http.Request, e *limits.Error, drain, asked bool) {
	observe(m.cfg.Observe, r, OutcomeRejected, limits.Usage{}, e)
	if m.cfg.Logger != nil {
		m.cfg.Logger.LogAttrs(r.Context(), slog.LevelWarn, "boundhttp: request body rejected",
			slog.String("stage", string(e.Stage)), slog.Int64("limit", e.Limit),
			slog.Int64("observed", e.Observed), slog.String("encoding", limits.Echo(e.Encoding)),
			slog.String("field", limits.Echo(e.Field)), slog.String("pointer", limits.EchoPointer(e.Pointer)),
			slog.String("method", limits.Echo(r.Method)), slog.String("route", route(r)))
	}
	if e.Stage == limits.StageEncoding {
		w.Header().Set("Accept-Encoding", m.acceptEncoding)
	}
	inflightHeaders(w, e, m.body.Decoder.Pool())
	// The rest of the body is drained within a bound after the answer, and
	// the connection closes, so that the answer arrives whatever wraps w.
	closeAfterRejection(w, r)
	m.cfg.Reject(w, r, e)
	if drain {
		drainAfterRejection(w, r, e.Stage == limits.StageTimeout, asked)
	}
}

// logger returns the Logger, or slog.Default for the records that are
// logged whether a Logger is set or not.
func (m *middleware) logger() *slog.Logger {
	if m.cfg.Logger != nil {
		return m.cfg.Logger
	}
	return slog.Default()
}

// withPattern returns r, or a copy of r with the ServeMux pattern that a
// mux inside the middleware set on the handler's request, inner.
func withPattern(r, inner *http.Request) *http.Request {
	if r.Pattern != "" || inner.Pattern == "" {
		return r
	}
	r = r.WithContext(r.Context())
	r.Pattern = inner.Pattern
	return r
}

// route names the request's route for logs: the ServeMux pattern if any,
// else the path, which the client chose, in its bounded form.
func route(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return limits.Echo(r.URL.Path)
}
