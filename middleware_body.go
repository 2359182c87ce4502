package boundhttp

import (
	"bufio"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/limits"
)

// exchange is one request whose body the middleware charges: the stages of
// [middleware.serve] are its methods.
type exchange struct {
	m       *middleware
	w       http.ResponseWriter
	r       *http.Request // as it arrived
	r2      http.Request  // as the handler gets it, held here rather than allocated apart (see handlersRequest)
	rc      http.ResponseController
	uctx    usageCtx  // r2's context
	decoded bool      // a coding is removed: the decoded length is unknown
	framed  bool      // net/http's own body, framed by the Content-Length its header states (see lengthFramed)
	src     askedBody // the request's body, as the body reads it
	body    body.Body
}

// askedBody is a request body that records whether it was ever read:
// net/http sends "100 Continue" at the first Read of a request that
// expects it, and the client then sends the whole body, which a rejection
// must drain.
//
// It offers no Close: the engine closes the request's body itself
// (Source.Closer), and a decoder reading it must not.
type askedBody struct {
	rc    io.ReadCloser // the request's body, of the type it has in the request: no conversion per request
	asked atomic.Bool
}

func (b *askedBody) Read(p []byte) (int, error) {
	if !b.asked.Load() {
		b.asked.Store(true) // once: a store is a locked instruction, a load is not
	}
	return b.rc.Read(p)
}

// start begins the exchange and starts the body's deadline. A streamed
// body gets the connection's read deadline now, before any rejection, and
// it is cleared only when the body ended: the handler may leave the body
// unread, net/http then still reads up to 256 KiB of it before it closes,
// and a client that stalls must not hold that read (and the connection)
// open past Budget.Timeout. A body read whole is read before the handler
// runs: where the server's own writer sets the read deadline, the watchdog
// keeps it (see body.Source.Watched); behind any other writer it is set
// now, as for a streamed body, and where that fails the read runs apart
// (readWhole). A rejection's drain sets its own deadlines
// (drainAfterRejection).
func (m *middleware) start(w http.ResponseWriter, r *http.Request, b *limits.Budget) *exchange {
	x := &exchange{m: m, w: w, r: r}
	x.rc = *http.NewResponseController(w) // inlined: no allocation of its own
	if b.Timeout <= 0 {
		return x
	}
	now := time.Now()
	src := x.body.Source() // the deadline is the body's: it starts here, admit fills in the rest
	switch {
	case !m.cfg.Streaming && serversDeadline(w) && !bubbleTime(now):
		// A body read whole is read now: the watchdog sets the deadline
		// only if the read outlasts it (see body.Source.Watched). Not in a
		// testing/synctest bubble: the watchdog's one timer serves the
		// whole process, and armed from a bubble it would follow neither
		// clock (nor could it be reset outside the bubble).
		src.ArmedAt, src.Watched = now, true
	default:
		// Streamed, or behind a writer of someone else's whose
		// SetReadDeadline may fail when the watchdog needs it: set now, the
		// deadline is known to reach the connection (else a whole body's
		// read runs apart, see readWhole).
		if x.rc.SetReadDeadline(now.Add(b.Timeout)) == nil {
			src.ArmedAt = now
		}
	}
	return x
}

// serversDeadline reports whether the read deadline that reaches the
// connection through w is set by the server's own writer (net/http's, for
// HTTP/1 and HTTP/2 wherever net/http keeps it, or
// golang.org/x/net/http2's), found as
// [http.ResponseController] finds it: the first of w and the writers it
// unwraps to that has SetReadDeadline. Only such a writer is known to
// succeed whenever it is called, as the watchdog calls it, at the deadline
// and no sooner: a wrapper's SetReadDeadline may forward to a writer that
// has none ([http.TimeoutHandler]'s) and fail, and a stalled read would
// then wait unanswered for the server's ReadTimeout.
func serversDeadline(w http.ResponseWriter) bool {
	if v := lastWriter.Load(); v != nil && v.t == reflect.TypeOf(w) {
		return v.ours // w is of the type last found to have SetReadDeadline
	}
	for range maxUnwrap {
		switch t := w.(type) {
		case interface{ SetReadDeadline(time.Time) error }:
			return serversWriter(reflect.TypeOf(t))
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return false
		}
	}
	return false
}

// lengthFramed reports whether r's body is net/http's own body of an
// HTTP/1 request framed by its Content-Length, which returns no more than
// that and fails with io.ErrUnexpectedEOF when the connection ends sooner.
// Any other body (HTTP/2's, one behind "Expect: 100-continue", one an outer
// handler put in its place) is not known to keep to a length. Nor is
// net/http's body when ContentLength is no longer the header it framed the
// body by: an outer handler that changed the field kept the body the
// client framed, whose bytes a read to the field's length would refuse.
func lengthFramed(r *http.Request) bool {
	return r.ContentLength > 0 && len(r.TransferEncoding) == 0 && reflect.TypeOf(r.Body) == netHTTPBody &&
		statesLength(r.Header, r.ContentLength)
}

// netHTTPBody is the type of the body net/http's server gives an HTTP/1
// request with a Content-Length: that of http.ReadRequest's, which
// parses requests with the server's code.
var netHTTPBody = func() reflect.Type {
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx")))
	if err != nil {
		return nil
	}
	return reflect.TypeOf(req.Body)
}()

// serversWriter reports whether t is a writer type of net/http's or
// golang.org/x/net/http2's. The last verdict is kept: a server hands every
// request the same writer type, and the package path is a walk through the
// type's name data.
func serversWriter(t reflect.Type) bool {
	if v := lastWriter.Load(); v != nil && v.t == t {
		return v.ours
	}
	rt := t
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	p := rt.PkgPath()
	ours := p == "net/http" || strings.HasPrefix(p, "net/http/internal/") || p == "golang.org/x/net/http2"
	lastWriter.Store(&writerVerdict{t, ours})
	return ours
}

// writerVerdict is serversWriter's verdict on one writer type.
type writerVerdict struct {
	t    reflect.Type
	ours bool
}

var lastWriter atomic.Pointer[writerVerdict]

// admit checks what the headers declare (length, codings) and opens the
// body under b, or returns the rejection to answer. The common request,
// with no Content-Encoding, takes no step of the codings' (see decode).
func (x *exchange) admit(b *limits.Budget) *limits.Error {
	if err := b.CheckContentLength(x.r.ContentLength); err != nil {
		return err.(*limits.Error)
	}
	x.src.rc = x.r.Body
	// Filled in place (start set its deadline): a Source is over 200 bytes.
	src := x.body.Source()
	src.Body, src.Closer, src.Budget = &x.src, x.r.Body, *b
	src.Mode = body.Whole
	if x.m.cfg.Streaming {
		src.Mode = body.Stream
	}
	src.JSON = x.m.body.JSON != nil && (x.m.cfg.JSONAlways || isJSON(x.r.Header.Get("Content-Type")))
	src.Ctx, src.InFlightWait, src.RC = x.r.Context(), x.m.cfg.InFlightWait, &x.rc
	if x.m.cfg.Peer != nil {
		src.Peers = [2]string{x.r.RemoteAddr, x.m.cfg.Peer(x.r)}
	} else {
		src.Peers = clientPeers(x.r.RemoteAddr)
	}
	// The codings of every Content-Encoding line (net/http keeps keys canonical).
	if ce := x.r.Header["Content-Encoding"]; len(ce) > 0 {
		return x.decode(ce)
	}
	return x.identity()
}

// identity opens a body with no coding: its declared length is its size.
func (x *exchange) identity() *limits.Error {
	src := x.body.Source()
	src.SizeHint = x.r.ContentLength
	x.framed = lengthFramed(x.r)
	src.Exact = x.framed
	if err := x.body.Open(&x.m.body, src); err != nil {
		return err
	}
	x.handlersRequest()
	return nil
}

// decode opens a body whose Content-Encoding lines are ce: every coding
// named must be one the Middleware accepts, and the handler's request
// loses the header that no longer describes its body.
func (x *exchange) decode(ce []string) *limits.Error {
	src := x.body.Source()
	src.Encoding = strings.Join(ce, ",")
	codings := decoding.ParseContentEncoding(src.Encoding)
	if len(codings) == 0 {
		return x.identity() // only empty names, commas or identity: no coding
	}
	if err := x.body.Open(&x.m.body, src); err != nil {
		return err
	}
	for _, c := range codings {
		if !slices.Contains(x.m.codings, c) {
			x.body.Finish()
			return &limits.Error{Stage: limits.StageEncoding, Encoding: peertext.Cut(c)}
		}
	}
	x.decoded = true
	x.handlersRequest()
	// The header changes: on a copy, never on the caller's. An identity
	// body keeps the caller's header, as with http.MaxBytesHandler,
	// unless its Content-Length must be set.
	x.r2.Header = x.r.Header.Clone()
	x.r2.Header.Del("Content-Encoding")
	return nil
}

// handlersRequest makes the request the handler gets: a shallow copy, as
// http.MaxBytesHandler makes, held in the exchange (WithContext's own copy
// is inlined and stays on the stack, so the request costs no allocation of
// its own), whose context carries the body's usage.
func (x *exchange) handlersRequest() {
	x.r2 = *x.r.WithContext(x.uctx.set(x.r.Context(), x.body.Usage()))
	x.r2.TransferEncoding = nil
	x.r2.GetBody = nil
}

// whole reads and verifies the body, then hands it on with its decoded
// length, or answers the breach without calling the handler.
func (x *exchange) whole(next http.Handler) {
	if e, ok, abandoned := x.readWhole(); !ok {
		x.refuse(e, abandoned)
		return
	}
	if x.m.cfg.Observe != nil {
		u, _ := x.body.Usage().Get()
		observe(x.m.cfg.Observe, x.r, OutcomeAccepted, u, nil)
	}
	size := x.body.Size()
	x.r2.Body = &x.body
	x.r2.ContentLength = size
	if x.decoded || x.r.ContentLength != size || !(x.framed || statesLength(x.r.Header, size)) {
		x.setLength(size)
	}
	next.ServeHTTP(x.w, &x.r2)
}

// refuse answers a whole body that failed to be read: e, or the stalled
// read's answer when it was abandoned, or nothing when the client is gone.
func (x *exchange) refuse(e *limits.Error, abandoned bool) {
	switch {
	case abandoned:
		x.m.answerStalled(x.w, x.r, e)
	case e != nil:
		x.body.Finish() // its in-flight share is not held while the rest is drained
		x.m.reject(x.w, x.r, e, x.src.asked.Load())
	} // else the client is gone: no one to answer
}

// setLength states the decoded size in the handler's Content-Length, on
// a header of its own.
func (x *exchange) setLength(size int64) {
	if !x.decoded {
		x.r2.Header = x.r.Header.Clone()
	}
	if x.r2.Header == nil {
		x.r2.Header = make(http.Header)
	}
	x.r2.Header.Set("Content-Length", strconv.FormatInt(size, 10))
}

// stream hands the body on as it is read, and answers a breach the handler
// left unanswered.
func (x *exchange) stream(next http.Handler) {
	x.r2.Body = &x.body
	if x.decoded {
		x.r2.ContentLength = -1
		x.r2.Header.Del("Content-Length")
	}
	var before [len(framingHeaders)][]string
	for i, k := range framingHeaders {
		before[i] = slices.Clone(x.w.Header()[k])
	}
	tw := &trackingWriter{ResponseWriter: x.w}
	returned := false
	defer func() {
		if !returned {
			// A panic (the response cap's abort, http.ErrAbortHandler)
			// ends the exchange: no drain, no answer, but the body's
			// outcome is still reported.
			x.observeEnd(x.body.Breach())
		}
	}()
	next.ServeHTTP(trackWrites(tw), &x.r2)
	returned = true
	// The handler has returned, but a goroutine of its may still read (a
	// handler behind http.TimeoutHandler): the rest of the request body is
	// drained only if no Read of ours is in progress, and none can start.
	idle := x.body.FinishIdle()
	e := x.body.Breach()
	switch {
	case tw.hijacked:
		// The connection, with the rest of the body on it, is the
		// handler's: no drain reads it or sets its deadline, and no answer
		// is written to it.
		x.observeEnd(e)
	case e == nil:
		u, done := x.body.Usage().Get()
		if done {
			if x.m.cfg.Observe != nil {
				observe(x.m.cfg.Observe, withPattern(x.r, &x.r2), OutcomeAccepted, u, nil)
			}
		} else if idle {
			// The handler stopped reading early: its own
			// http.MaxBytesReader tripped (net/http never learns, since
			// the writer it was given is not net/http's), or it answered
			// without the body. Its answer must arrive as well as it
			// would without this middleware.
			drainAfterRejection(x.w, x.r, false, x.src.asked.Load())
		}
	case tw.wrote: // the handler answered: let its answer arrive too
		if x.m.cfg.Observe != nil {
			observe(x.m.cfg.Observe, withPattern(x.r, &x.r2), OutcomeRejected, limits.Usage{}, e)
		}
		closeAfterRejection(x.w, x.r)
		if idle {
			drainAfterRejection(x.w, x.r, e.Stage == limits.StageTimeout, x.src.asked.Load())
		}
	default:
		// The handler's answer never started: the framing it meant for
		// it must not frame the rejection.
		h := x.w.Header()
		for i, k := range framingHeaders {
			if before[i] == nil {
				delete(h, k)
			} else {
				h[k] = before[i]
			}
		}
		x.m.answer(x.w, withPattern(x.r, &x.r2), e, idle, x.src.asked.Load())
	}
}

// observeEnd reports the outcome of a streamed body whose exchange ends
// without the middleware's drain or answer: rejected with its breach e,
// accepted if the handler read it to its verified end, else nothing.
func (x *exchange) observeEnd(e *limits.Error) {
	if x.m.cfg.Observe == nil {
		return
	}
	r := withPattern(x.r, &x.r2)
	if e != nil {
		observe(x.m.cfg.Observe, r, OutcomeRejected, limits.Usage{}, e)
	} else if u, done := x.body.Usage().Get(); done {
		observe(x.m.cfg.Observe, r, OutcomeAccepted, u, nil)
	}
}

// framingHeaders describe the bytes of a response body: set by a handler
// for an answer it never wrote, they would cut short or mislabel the
// rejection written in its place.
var framingHeaders = [...]string{"Content-Length", "Content-Encoding", "Content-Range", "Transfer-Encoding"}

// RequestBodyError is the error a handler reads from a request body the
// middleware rejected in streaming mode. errors.As finds the
// [*limits.Error] in it and, for the byte stages (wire and decoded), an
// [*http.MaxBytesError] whose Limit is the byte limit that tripped, so
// handlers written for [http.MaxBytesReader] keep working. Other "too
// large" stages (layers, window, runes, ratio, json) match
// limits.ErrTooLarge but not *http.MaxBytesError: their limits are not
// byte counts of the body.
type RequestBodyError struct {
	Err *limits.Error
}

func (e *RequestBodyError) Error() string { return e.Err.Error() }

// Unwrap returns the *limits.Error.
func (e *RequestBodyError) Unwrap() error { return e.Err }

// As fills a **http.MaxBytesError target for the byte stages, wire and
// decoded: only there is the limit a number of bytes.
func (e *RequestBodyError) As(target any) bool {
	t, ok := target.(**http.MaxBytesError)
	if !ok || (e.Err.Stage != limits.StageWire && e.Err.Stage != limits.StageDecoded) {
		return false
	}
	*t = &http.MaxBytesError{Limit: e.Err.Limit}
	return true
}

// wrapBreach is the error a streaming handler reads for a breach.
func wrapBreach(e *limits.Error) error { return &RequestBodyError{Err: e} }
