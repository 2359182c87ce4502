package boundhttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/chunk"
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
// middleware starts reading it, through [http.ResponseController]
// read deadlines; the deadline is cleared once the body verified. Where the
// ResponseWriter does not support read deadlines (http.ErrNotSupported), the
// timeout is still checked between reads, but a read that never returns is
// ended only by the server's own ReadTimeout: set one.
//
// A rejection sets "Connection: close": the rest of the body is not read or
// drained. In streaming mode the handler sees the breach first; see
// [MiddlewareConfig.Streaming].
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
	Budget limits.Budget

	// BudgetFor, if set, returns the budget of one request (a per-route
	// budget, say). A budget it returns that is invalid is answered 500 and
	// logged; the handler is not called.
	BudgetFor func(*http.Request) limits.Budget

	// Streaming hands the handler a bounded decoding reader instead of the
	// whole verified body. A breach is returned from Read as an error that
	// matches both *limits.Error and, for size stages, *http.MaxBytesError
	// with errors.As; io.EOF comes only after the verified end. If the
	// handler has not written when it returns after a breach, the
	// middleware answers with the rejection.
	Streaming bool

	// Codings lists the request content-codings that are decoded. Nil means
	// all of [decoding.Supported]; an empty, non-nil list accepts identity
	// bodies only. A request with another coding is answered 415 with an
	// Accept-Encoding header listing these (RFC 9110 section 15.5.16).
	Codings []string

	// Reject writes the answer to a rejected body. Nil means
	// [WriteProblem]. It is called only when the handler has not written.
	Reject func(w http.ResponseWriter, r *http.Request, e *limits.Error)

	// Logger, if set, receives one record per rejection at level Warn, with
	// the stage, limit, observed bytes, coding, method and route; never any
	// body bytes.
	Logger *slog.Logger

	// DecodeOptions are passed to the decoder of every body.
	DecodeOptions []decoding.Option

	// JSON, if set, holds the shape of every JSON request body
	// (application/json, text/json, */*+json) to these limits before the
	// handler sees it: a breach is answered 413 with stage json and the
	// JSON Pointer of where it tripped, a syntax error 400. In streaming
	// mode the check runs as the handler reads. Nil means no shape check.
	JSON *limits.JSON

	// ToolSchemas maps tool names to their input schemas (the inputSchema
	// of MCP tools served behind this middleware). NewMiddleware audits
	// them and logs one warning per tool, at start-up, whose input has no
	// ceiling or whose largest tools/call request does not fit Budget with
	// schema.DefaultHeadroom (see package schema). Logged to Logger, or to
	// slog.Default if Logger is nil. It does not change what is accepted.
	ToolSchemas map[string]json.RawMessage
}

// NewMiddleware returns the middleware c describes, or an error if c.Budget
// or a coding in c.Codings is invalid.
func NewMiddleware(c MiddlewareConfig) (func(http.Handler) http.Handler, error) {
	if err := c.Budget.Validate(); err != nil {
		return nil, err
	}
	if c.JSON != nil {
		if err := c.JSON.Validate(); err != nil {
			return nil, err
		}
	}
	codings := decoding.Supported()
	if c.Codings != nil {
		codings = make([]string, 0, len(c.Codings))
		for _, name := range c.Codings {
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "x-gzip" {
				name = "gzip"
			}
			if !decoding.IsSupported(name) {
				return nil, fmt.Errorf("boundhttp: MiddlewareConfig.Codings: %q cannot be decoded", name)
			}
			codings = append(codings, name)
		}
	}
	auditTools(c)
	m := &middleware{cfg: c, codings: codings, acceptEncoding: strings.Join(append(slices.Clip(codings), "identity"), ", ")}
	if m.cfg.Reject == nil {
		m.cfg.Reject = WriteProblem
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.serve(next, w, r) })
	}, nil
}

type middleware struct {
	cfg            MiddlewareConfig
	codings        []string
	acceptEncoding string
}

func (m *middleware) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	b := m.cfg.Budget
	if m.cfg.BudgetFor != nil {
		b = m.cfg.BudgetFor(r)
		if err := b.Validate(); err != nil {
			if m.cfg.Logger != nil {
				m.cfg.Logger.Error("boundhttp: invalid per-route budget", "err", err, "route", route(r))
			}
			http.Error(w, "invalid body budget", http.StatusInternalServerError)
			return
		}
	}
	b = b.WithDefaults()
	if r.Body == nil || r.Body == http.NoBody {
		next.ServeHTTP(w, r)
		return
	}
	if err := b.CheckContentLength(r.ContentLength); err != nil {
		m.reject(w, r, err.(*limits.Error))
		return
	}
	ce := strings.Join(r.Header.Values("Content-Encoding"), ",")
	d, err := decoding.NewReader(r.Body, ce, b, m.cfg.DecodeOptions...)
	if err != nil {
		var le *limits.Error
		if errors.As(err, &le) {
			m.reject(w, r, le)
			return
		}
		http.Error(w, "invalid body budget", http.StatusInternalServerError)
		return
	}
	codings := decoding.ParseContentEncoding(ce)
	for _, c := range codings {
		if !slices.Contains(m.codings, c) {
			m.reject(w, r, &limits.Error{Stage: limits.StageEncoding, Encoding: c})
			return
		}
	}
	cell := new(usageCell)
	r2 := r.WithContext(withUsageCell(r.Context(), cell)) // a shallow copy
	r2.Header = r.Header.Clone()
	r2.TransferEncoding = nil
	r2.GetBody = nil
	if len(codings) > 0 {
		r2.Header.Del("Content-Encoding")
	}

	checkJSON := m.cfg.JSON != nil && isJSON(r.Header.Get("Content-Type"))
	rc := http.NewResponseController(w)
	var deadline bool
	if b.Timeout > 0 {
		deadline = rc.SetReadDeadline(time.Now().Add(b.Timeout)) == nil
	}
	if m.cfg.Streaming {
		sb := &serverBody{r: d, d: d, cell: cell, timeout: b.Timeout, deadline: deadline, rc: rc}
		if checkJSON {
			jc, _ := decoding.NewJSONChecker(*m.cfg.JSON) // validated in NewMiddleware
			sb.r = &jsonCheckReader{ReadCloser: d, c: jc}
		}
		r2.Body = sb
		if len(codings) > 0 {
			r2.ContentLength = -1
			r2.Header.Del("Content-Length")
		}
		tw := &trackingWriter{ResponseWriter: w}
		next.ServeHTTP(tw, r2)
		if sb.err != nil && !tw.wrote {
			m.reject(w, r, sb.err)
		}
		return
	}
	if len(codings) == 0 {
		d.SetSizeHint(r.ContentLength)
	}
	chunks, err := chunk.ReadAll(d)
	if deadline {
		rc.SetReadDeadline(time.Time{})
	}
	if err == nil && checkJSON {
		err = checkJSONChunks(chunks, *m.cfg.JSON)
	}
	if err != nil {
		le := serverError(err, b.Timeout)
		if le == nil {
			// The client went away or the connection failed: no verdict.
			return
		}
		m.reject(w, r, le)
		return
	}
	cell.set(d.Usage(), true)
	full := newFullBody(chunks, cell)
	r2.Body = full
	r2.ContentLength = full.size
	r2.Header.Set("Content-Length", strconv.FormatInt(full.size, 10))
	defer full.Close() // the handler has returned: its body is done with
	next.ServeHTTP(w, r2)
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

// serverError turns a read error into the rejection to report, or nil when
// the error is not about the body (a closed connection).
func serverError(err error, timeout time.Duration) *limits.Error {
	var le *limits.Error
	if errors.As(err, &le) {
		return le
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &limits.Error{Stage: limits.StageTimeout, Limit: timeout.Milliseconds(),
			Observed: timeout.Milliseconds(), Err: err}
	}
	return nil
}

func (m *middleware) reject(w http.ResponseWriter, r *http.Request, e *limits.Error) {
	if m.cfg.Logger != nil {
		m.cfg.Logger.LogAttrs(r.Context(), slog.LevelWarn, "boundhttp: request body rejected",
			slog.String("stage", string(e.Stage)), slog.Int64("limit", e.Limit),
			slog.Int64("observed", e.Observed), slog.String("encoding", e.Encoding),
			slog.String("method", r.Method), slog.String("route", route(r)))
	}
	if e.Stage == limits.StageEncoding {
		w.Header().Set("Accept-Encoding", m.acceptEncoding)
	}
	// The rest of the body is not read: close the connection rather than
	// drain an unbounded remainder.
	w.Header().Set("Connection", "close")
	m.cfg.Reject(w, r, e)
}

// route names the request's route for logs: the ServeMux pattern if any,
// else the path.
func route(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return r.URL.Path
}

// RequestUsage reports what the body of a request handed on by the
// middleware cost, and whether the body was read to its verified end.
func RequestUsage(r *http.Request) (limits.Usage, bool) {
	if c, ok := r.Context().Value(usageKey{}).(*usageCell); ok {
		return c.get()
	}
	return limits.Usage{}, false
}
