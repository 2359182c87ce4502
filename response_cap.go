package boundhttp

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/boundhttp/boundhttp/limits"
)

// ResponseCap returns middleware that caps the response body every handler
// it wraps may write at max bytes, and nothing else: request bodies are
// not read, decoded or charged (use [Middleware] for those, or
// [MiddlewareConfig.MaxResponseBytes] for both at once). It panics if max
// is not positive, as a configuration error; use [NewResponseCap] to get
// the error instead, and to choose the rejection and the logger.
func ResponseCap(max int64) func(http.Handler) http.Handler {
	h, err := NewResponseCap(ResponseCapConfig{MaxBytes: max})
	if err != nil {
		panic(err)
	}
	return h
}

// ResponseCapConfig is the fuller form of [ResponseCap].
type ResponseCapConfig struct {
	// MaxBytes is the most response body bytes a handler may write,
	// counted as the handler writes them (decoded bytes, before any
	// response compression further out). It must be positive: zero and
	// negative are configuration errors (a response cap has no default
	// size; where none is wanted, do not install one).
	//
	// The handler's status and first body bytes are held until it flushes
	// or has written more than 4096 bytes (what net/http itself buffers
	// before anything reaches the connection): until then nothing was sent.
	// A write that would pass the cap while nothing was sent is refused
	// whole and the client gets 500 from Reject (stage
	// [limits.StageResponse]) instead of the handler's headers and bytes; a
	// Content-Length above the cap is refused so when the status is
	// written. Once something was sent, a write over the cap is not made,
	// and when the handler returns the response is aborted with
	// [http.ErrAbortHandler] (HTTP/1.1 loses its last chunk or declared
	// length, HTTP/2 gets RST_STREAM; a body that ends with the connection,
	// on HTTP/1.0 or with Transfer-Encoding: identity, ends with a TCP
	// reset) and logged, so that it cannot look complete. Either way the
	// write that passed the cap and every later one return a
	// [*limits.Error] of stage response (errors.Is [limits.ErrTooLarge]).
	//
	// The handler's writer has exactly the optional interfaces
	// ([http.Flusher], [http.Hijacker], [io.ReaderFrom], [http.Pusher]) of
	// the writer it wraps, counts the bytes of ReadFrom, and unwraps for
	// [http.ResponseController]. Not covered: the bytes of a hijacked
	// connection, 1xx informational responses, pushed responses (each is a
	// request of its own, capped where it is served), and header bytes.
	// Like any ResponseWriter it is not safe for concurrent use, and must
	// not be used after the handler returns.
	//
	// An event stream (Content-Type text/event-stream when the status is
	// set, and still when the held response is sent) is capped per event,
	// not as a whole: it is a session's channel
	// (an MCP streamable-HTTP server's GET stream carries every
	// notification and keep-alive ping for as long as the session lives),
	// and what a client holds at once is one event. Each event, from its
	// first byte to the end of the blank line that ends it, may have at
	// most MaxBytes bytes; a longer one is a breach as above (usually an
	// abort: streams flush). Any number of events within the cap pass.
	//
	// Which bytes are counted depends on where a response compressor sits.
	// Inside the cap (the cap wraps the compressor, which wraps the
	// handler), the cap sees and counts compressed bytes: a body that
	// compresses well passes whole however large it is decoded. Outside
	// (the compressor wraps the cap), the cap counts what the handler
	// writes; the compressor may still buffer what the cap counts as sent,
	// so before an abort the writer is flushed: the client gets the status
	// and a body that is visibly cut, not a connection closed without a
	// status line. To bound what a client decodes, put the compressor
	// outside.
	MaxBytes int64

	// Reject writes the 500 that answers a response over the cap before
	// anything of it was sent, with the headers that described the
	// handler's body (Content-Length, Content-Encoding, Cache-Control, ...)
	// removed. Nil means [WriteProblem].
	Reject func(w http.ResponseWriter, r *http.Request, e *limits.Error)

	// Logger receives one record per breach at level Error, with the
	// stage, limit, observed bytes, whether the response was aborted, the
	// method and the route. Nil means slog.Default: a server's own output
	// over its cap is a bug to be seen.
	Logger *slog.Logger

	// Observe, if set, is called once for each response over the cap, at
	// the write that passed it, with an [Outcome] of kind
	// OutcomeResponseBreach; see [MiddlewareConfig.Observe].
	Observe func(Outcome)
}

// NewResponseCap returns the middleware c describes, or an error if
// c.MaxBytes is not positive.
func NewResponseCap(c ResponseCapConfig) (func(http.Handler) http.Handler, error) {
	if c.MaxBytes <= 0 {
		return nil, fmt.Errorf("boundhttp: ResponseCapConfig.MaxBytes must be positive, got %d", c.MaxBytes)
	}
	rc := newResponseCap(c)
	return rc.wrap, nil
}

// responseCap is a validated ResponseCapConfig with its defaults.
type responseCap struct{ ResponseCapConfig }

func newResponseCap(c ResponseCapConfig) *responseCap {
	if c.Reject == nil {
		c.Reject = WriteProblem
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return &responseCap{c}
}

// wrap returns next with its response body capped. Rejections written
// further out (the Middleware's own) go to the writer next is handed, not
// through the cap, and are not charged.
func (rc *responseCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &capWriter{w: w, limit: rc.MaxBytes, reject: rc.Reject, r: r, observe: rc.Observe}
		// Logged on the way out, also when the handler panics after a
		// breach (its panic then ends the response).
		defer func() {
			if c.err != nil {
				rc.logBreach(r, c)
			}
		}()
		next.ServeHTTP(c.wrapped(), r)
		// The handler has returned: this is the serving goroutine, where a
		// panic with http.ErrAbortHandler is recovered by the server (in a
		// goroutine the handler started, it would crash the program).
		if c.state == capHolding {
			c.commit()
		}
		if c.state == capAborted {
			if c.closeDelimited && c.reset() {
				return
			}
			// A writer outside the cap that buffers (a compressor) may
			// hold the status and every byte "sent": flushed first, they
			// reach the client, whose body is then cut by the abort, rather
			// than a connection that ends without a status line.
			http.NewResponseController(c.w).Flush()
			panic(http.ErrAbortHandler)
		}
	})
}

// logBreach logs c's breach.
func (rc *responseCap) logBreach(r *http.Request, c *capWriter) {
	rc.Logger.LogAttrs(r.Context(), slog.LevelError, "boundhttp: response over the cap",
		slog.String("stage", string(c.err.Stage)), slog.Int64("limit", c.err.Limit),
		slog.Int64("observed", c.err.Observed), slog.Bool("declared", c.err.Declared),
		slog.Bool("aborted", c.state == capAborted), slog.String("method", limits.Echo(r.Method)), slog.String("route", route(r)))
}
