package boundhttp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/boundhttp/boundhttp/internal/sat"
	"github.com/boundhttp/boundhttp/limits"
)

// holdBytes is how many body bytes a capped response holds back before
// sending anything: about what net/http buffers before a write reaches the
// connection (4 KiB for the connection's writer and HTTP/2's DATA frames).
// A response over the cap within these bytes, and not flushed, is still a
// clean 500.
const holdBytes = 4096

// holdPool keeps the buffers of held bytes. A buffer belongs to the
// capWriter that took it until that commits or breaches, which puts it back
// (net/http has copied the bytes by then).
var holdPool = sync.Pool{New: func() any { return new([holdBytes]byte) }}

// The states of a capWriter.
const (
	capHolding   = iota // nothing sent: status and bytes held
	capCommitted        // status and held bytes handed to the underlying writer
	capRejected         // over the cap before anything was sent: answered 500
	capAborted          // over the cap after something was sent: to abort
	capHijacked         // the handler took the connection: outside the cap
)

// capWriter is the ResponseWriter a capped handler writes to. It counts
// body bytes against limit and holds the status and the first holdBytes of
// body until the handler flushes or writes more, so that a breach within
// them can still be answered 500. Header changes made between WriteHeader
// and the first write that is sent therefore still take effect, except the
// values of declared trailers, which stay trailers. A response that
// declares a Content-Length within the cap is not held: net/http refuses
// bytes past it on Write (not on ReadFrom's sendfile path, which the cap
// still counts), so the cap cannot be passed.
//
// Not safe for concurrent use, like the writer it wraps.
type capWriter struct {
	w       http.ResponseWriter
	limit   int64 // > 0
	reject  func(http.ResponseWriter, *http.Request, *limits.Error)
	observe func(Outcome) // or nil
	r       *http.Request
	state   int
	code    int              // the status held, 0 if none yet
	hold    *[holdBytes]byte // from holdPool while bytes are held
	nheld   int              // body bytes held in hold
	written int64            // body bytes accepted from the handler, at most limit
	err     *limits.Error    // the breach, sticky
	// trailers holds, from when the status was set, the values (nil if
	// none) of the trailers the header declared then; nil if none.
	trailers http.Header
	// closeDelimited reports whether the response sent ends with the
	// connection (HTTP/1.0, or Transfer-Encoding: identity): no framing
	// to lose, so an abort must reset the connection.
	closeDelimited bool
	// events is set, with the status, for an event stream: the cap then
	// holds each event (see response_cap_events.go), not the whole.
	events bool
	event  eventState
}

// wrapped returns c as the handler's writer (see [wrapWriter]).
func (c *capWriter) wrapped() http.ResponseWriter { return wrapWriter(c) }

func (c *capWriter) Header() http.Header { return c.w.Header() }

// bodyAllowed reports whether a response with status code may have a body
// (RFC 9110 section 6.4.1); 0 stands for the implicit 200.
func bodyAllowed(code int) bool {
	return code == 0 || (code >= 200 && code != http.StatusNoContent && code != http.StatusNotModified)
}

func (c *capWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		// As net/http does, at the call that is wrong rather than later.
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	switch c.state {
	case capCommitted, capHijacked:
		c.w.WriteHeader(code) // net/http reports a superfluous call
		return
	case capRejected, capAborted:
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		c.w.WriteHeader(code) // informational: sent at once, not the response
		return
	}
	if c.code != 0 {
		return // superfluous
	}
	c.setCode(code)
	if !bodyAllowed(code) {
		c.commit()
		return
	}
	if e := c.declared(); e != nil {
		c.breach(e)
	}
}

// setCode holds code as the status, and what the declared trailers hold
// at this moment: net/http takes its copy of the header here, so a
// trailer's value set after it (as net/http documents) is a trailer only.
func (c *capWriter) setCode(code int) {
	c.code = code
	h := c.w.Header()
	c.events = declaresEventStream(h)
	for _, v := range h["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
				if c.trailers == nil {
					c.trailers = http.Header{}
				}
				c.trailers[k] = slices.Clone(h[k])
			}
		}
	}
}

// writeHeader calls WriteHeader on the underlying writer with the header as
// it was when the status was set, as far as the declared trailers go, and
// puts back their values set since.
func (c *capWriter) writeHeader() {
	h := c.w.Header()
	var later http.Header
	for k, then := range c.trailers {
		if now, ok := h[k]; ok && !slices.Equal(now, then) {
			if later == nil {
				later = http.Header{}
			}
			later[k] = now
			if then == nil {
				delete(h, k)
			} else {
				h[k] = then
			}
		}
	}
	c.w.WriteHeader(c.code)
	for k, v := range later {
		h[k] = v
	}
}

// declared returns the breach of a declared Content-Length above the cap.
func (c *capWriter) declared() *limits.Error {
	if !bodyAllowed(c.code) {
		return nil
	}
	v := c.w.Header().Get("Content-Length")
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= c.limit {
		return nil // a malformed value is net/http's to refuse
	}
	return &limits.Error{Stage: limits.StageResponse, Limit: c.limit, Observed: n, Declared: true}
}

// declaresLength reports whether the header declares a Content-Length
// that net/http will keep and enforce; a value it refuses (logs and drops)
// bounds nothing.
func (c *capWriter) declaresLength() bool {
	n, err := strconv.ParseInt(c.w.Header().Get("Content-Length"), 10, 64)
	return err == nil && n >= 0
}

func (c *capWriter) Write(p []byte) (int, error) {
	switch c.state {
	case capRejected, capAborted:
		return 0, c.err
	case capHijacked:
		return c.w.Write(p) // net/http answers http.ErrHijacked
	case capCommitted:
		if !bodyAllowed(c.code) {
			return c.w.Write(p) // not body bytes: net/http answers http.ErrBodyNotAllowed
		}
	}
	if c.state == capHolding && c.code == 0 {
		c.setCode(http.StatusOK)
		if e := c.declared(); e != nil {
			return 0, c.breach(e)
		}
	}
	if c.state == capHolding {
		if e := c.eventsAsSent(); e != nil {
			return 0, c.breach(e)
		}
	}
	if c.events && bodyAllowed(c.code) {
		if e := c.event.scan(p, c.limit); e != nil {
			return 0, c.breach(e)
		}
	} else if int64(len(p)) > c.limit-c.written {
		return 0, c.breach(&limits.Error{Stage: limits.StageResponse, Limit: c.limit,
			Observed: sat.Add(c.written, int64(len(p)))})
	}
	if c.state == capHolding {
		// A declared length within the cap bounds the body by itself
		// (net/http refuses writes past it): nothing to hold.
		if bodyAllowed(c.code) && len(p) <= holdBytes-c.nheld && !c.declaresLength() {
			if len(p) == 0 {
				return 0, nil
			}
			if c.hold == nil {
				c.hold = holdPool.Get().(*[holdBytes]byte)
			}
			c.nheld += copy(c.hold[c.nheld:], p)
			c.written += int64(len(p))
			return len(p), nil
		}
		if err := c.commit(); err != nil {
			return 0, err
		}
	}
	n, err := c.w.Write(p)
	c.written += int64(n)
	return n, err
}

// commit hands the held status and bytes to the underlying writer, unless
// the header now declares a Content-Length above the cap. It returns the
// breach or the error of writing the held bytes.
func (c *capWriter) commit() error {
	if e := c.declared(); e != nil {
		return c.breach(e)
	}
	if e := c.eventsAsSent(); e != nil {
		return c.breach(e)
	}
	c.state = capCommitted
	c.closeDelimited = c.r.ProtoMajor == 1 && (!c.r.ProtoAtLeast(1, 1) ||
		strings.EqualFold(strings.TrimSpace(c.w.Header().Get("Transfer-Encoding")), "identity"))
	if c.code != 0 {
		c.writeHeader()
	}
	if c.nheld == 0 {
		c.release()
		return nil
	}
	_, err := c.w.Write(c.hold[:c.nheld])
	c.release()
	return err
}

// eventsAsSent keeps the per-event cap only while the header, sent as it
// stands when the response is committed, still declares an event stream:
// a handler that set another Content-Type after WriteHeader sends a body
// that is not one, and its whole is capped from then on. It returns the
// breach of the bytes already held, if they pass the cap as a whole.
// Called only while nothing was sent.
func (c *capWriter) eventsAsSent() *limits.Error {
	if !c.events || declaresEventStream(c.w.Header()) {
		return nil
	}
	c.events = false
	if c.written > c.limit {
		return &limits.Error{Stage: limits.StageResponse, Limit: c.limit, Observed: c.written}
	}
	return nil
}

// release puts the hold buffer back, dropping what it held.
func (c *capWriter) release() {
	if c.hold != nil {
		holdPool.Put(c.hold)
		c.hold, c.nheld = nil, 0
	}
}

// representationHeaders are the handler's header fields that describe the
// body it meant to send, or how long it stays fresh; a 500 in its place
// drops them (as net/http's serveError drops Cache-Control), so that no
// cache keeps the 500 for the handler's max-age.
var representationHeaders = []string{"Content-Length", "Content-Encoding", "Content-Range",
	"Content-Disposition", "Content-Language", "Content-Location", "ETag", "Last-Modified",
	"Trailer", "Transfer-Encoding", "Cache-Control", "Expires"}

// breach records e and answers it: with Reject if nothing was sent, else by
// marking the response to abort. It returns e.
func (c *capWriter) breach(e *limits.Error) *limits.Error {
	c.err = e
	observe(c.observe, c.r, OutcomeResponseBreach, limits.Usage{}, e)
	if c.state != capHolding {
		c.state = capAborted
		return e
	}
	c.state = capRejected
	c.release()
	h := c.w.Header()
	for _, k := range representationHeaders {
		h.Del(k)
	}
	c.reject(c.w, c.r, e)
	return e
}

// WriteString is Write of s.
func (c *capWriter) WriteString(s string) (int, error) { return c.Write([]byte(s)) }

// readFrom copies src as Write would, counting every byte; the handler's
// writer has it as ReadFrom when the underlying writer has ReadFrom. Once
// the response was sent it hands at most the rest of the cap to the
// underlying writer's ReadFrom (sendfile stays possible), then reads one
// byte more to tell an exact fit from a breach; that byte is never sent.
func (c *capWriter) readFrom(src io.Reader) (int64, error) {
	var total int64
	if c.state == capHolding {
		// Fill the hold as a Write would, so that a small body over the
		// cap is still a 500; a buffer one byte over the cap or over the
		// hold ends holding either way.
		buf := make([]byte, min(c.limit, holdBytes)+1)
		n, err := io.ReadFull(src, buf)
		if n > 0 {
			m, werr := c.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
	rf, ok := c.w.(io.ReaderFrom)
	if c.state != capCommitted || !ok || c.events {
		n, err := io.Copy(writerOnly{c}, src)
		return total + n, err
	}
	rest := c.limit - c.written
	n, err := rf.ReadFrom(io.LimitReader(src, rest))
	c.written += n
	total += n
	if err != nil || n < rest {
		return total, err
	}
	var one [1]byte
	if m, err := io.ReadFull(src, one[:]); m == 0 {
		if err == io.EOF {
			err = nil
		}
		return total, err
	}
	return total, c.breach(&limits.Error{Stage: limits.StageResponse, Limit: c.limit, Observed: sat.Add(c.written, 1)})
}

// writerOnly hides ReadFrom from io.Copy.
type writerOnly struct{ io.Writer }

// push starts a server push. The pushed response is a request of its own,
// served through the middleware again, so it is capped there.
func (c *capWriter) push(target string, opts *http.PushOptions) error {
	return c.w.(http.Pusher).Push(target, opts)
}

// FlushError sends what is held and flushes the underlying writer; it
// reports http.ErrNotSupported, and sends nothing, if that cannot flush,
// and the breach after one. [http.ResponseController] calls it before unwrapping, so a flush
// always goes through the cap.
func (c *capWriter) FlushError() error {
	switch c.state {
	case capRejected, capAborted:
		return c.err
	case capHolding:
		if !canFlush(c.w) {
			return http.ErrNotSupported // nothing sent: keep holding
		}
		if c.code == 0 {
			c.code = http.StatusOK
		}
		if err := c.commit(); err != nil {
			return err
		}
	}
	return http.NewResponseController(c.w).Flush()
}

// canFlush reports whether [http.ResponseController] can flush w: w or a
// writer it unwraps to (at most maxUnwrap deep) has FlushError or Flush.
func canFlush(w http.ResponseWriter) bool {
	for range maxUnwrap {
		switch u := w.(type) {
		case interface{ FlushError() error }, http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			w = u.Unwrap()
		default:
			return false
		}
	}
	return false
}

// Unwrap returns the underlying writer, for [http.ResponseController].
func (c *capWriter) Unwrap() http.ResponseWriter { return c.w }

// hijack takes the connection, sending first what is held (as net/http
// flushes a written header before hijacking). The connection's bytes are
// outside the cap.
func (c *capWriter) hijack() (net.Conn, *bufio.ReadWriter, error) {
	if c.state == capHolding && (c.code != 0 || c.nheld > 0) {
		if err := c.commit(); err != nil {
			return nil, nil, err
		}
	}
	conn, rw, err := c.w.(http.Hijacker).Hijack()
	if err == nil {
		c.state = capHijacked
	}
	return conn, rw, err
}

// reset ends a close-delimited response with a TCP reset, and reports
// whether it could: such a body ends where the connection does, so the
// clean close of http.ErrAbortHandler would make a truncated body look
// whole. The connection is hijacked (net/http sends what was written
// first) and closed with SO_LINGER 0, below any TLS layer so that no
// close_notify marks a clean end. A connection that is not TCP is closed
// as it is.
func (c *capWriter) reset() bool {
	hj, ok := c.w.(http.Hijacker)
	if !ok {
		return false
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return false
	}
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = nc.NetConn()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
	return true
}
