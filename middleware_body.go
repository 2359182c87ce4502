package boundhttp

import (
	"context"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// serverBody is the request body a handler reads in streaming mode.
type serverBody struct {
	ctx      context.Context // the request's
	r        io.Reader       // d, or d behind a JSON shape check
	d        *decoding.Reader
	src      io.Closer // the request's own body, which d reads
	guard    readGuard // Close from another goroutine during a Read
	cell     *usageCell
	timeout  time.Duration
	deadline bool // a read deadline was set on the connection
	started  bool // the first Read came: the timeout runs from it
	rc       *http.ResponseController
	err      *limits.Error // the breach, for the middleware's answer
	rerr     error         // the sticky error handed to the handler
}

// Read reads decoded bytes. It may run while Close is called from another
// goroutine; a Read after Close returns [http.ErrBodyReadAfterClose].
func (s *serverBody) Read(p []byte) (int, error) {
	if err := s.guard.enter(); err != nil {
		if err == errBodyClosed {
			err = http.ErrBodyReadAfterClose
		}
		return 0, err
	}
	n, err := s.read(p)
	if s.guard.leave() {
		s.d.Close() // Close came during this Read: release now
	}
	return n, err
}

func (s *serverBody) read(p []byte) (int, error) {
	if s.rerr != nil {
		return 0, s.rerr
	}
	if !s.started && s.timeout > 0 {
		// The timeout runs from the first Read, as the decoder's does, not
		// from the handler's start: the handler may work before it reads.
		// Until then the deadline set before the handler stays, for the
		// rest of a body the handler never reads.
		s.deadline = s.rc.SetReadDeadline(time.Now().Add(s.timeout)) == nil
	}
	s.started = true
	n, err := s.r.Read(p)
	if err == nil {
		return n, nil
	}
	if err == io.EOF {
		s.cell.set(s.d.Usage(), true)
		if s.deadline {
			s.rc.SetReadDeadline(time.Time{})
		}
		return n, io.EOF
	}
	s.cell.set(s.d.Usage(), false)
	if le := serverError(s.ctx, err, s.timeout); le != nil {
		s.err = le
		err = &RequestBodyError{Err: le}
	}
	s.rerr = err
	return n, err
}

// Close closes the request's body first, which ends a Read blocked in it
// where the server allows (HTTP/2; net/http's HTTP/1 body waits for the
// Read to return), and returns the decoders to their pools only when no
// Read can touch them.
func (s *serverBody) Close() error {
	first, release := s.guard.close()
	if !first {
		return nil
	}
	err := s.src.Close()
	if release {
		s.d.Close()
	}
	return err
}

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

// serveStreaming hands r2 on with sb as its body, and answers a breach the
// handler left unanswered. r is the request as it arrived; decoded reports
// whether a coding is removed (the length is then unknown).
func (m *middleware) serveStreaming(next http.Handler, w http.ResponseWriter, r, r2 *http.Request, sb *serverBody, checkJSON, decoded bool) {
	if checkJSON {
		jc, _ := decoding.NewJSONChecker(*m.json) // validated in NewMiddleware
		sb.r = &jsonCheckReader{ReadCloser: sb.d, c: jc}
	}
	r2.Body = sb
	if decoded {
		r2.ContentLength = -1
		r2.Header.Del("Content-Length")
	}
	var before [len(framingHeaders)][]string
	for i, k := range framingHeaders {
		before[i] = slices.Clone(w.Header()[k])
	}
	tw := &trackingWriter{ResponseWriter: w}
	next.ServeHTTP(trackWrites(tw), r2)
	switch {
	case sb.err == nil:
	case tw.wrote: // the handler answered: let its answer arrive too
		closeAfterRejection(w, r)
	default:
		// The handler's answer never started: the framing it meant for
		// it must not frame the rejection.
		h := w.Header()
		for i, k := range framingHeaders {
			if before[i] == nil {
				delete(h, k)
			} else {
				h[k] = before[i]
			}
		}
		m.reject(w, withPattern(r, r2), sb.err)
	}
}

// framingHeaders describe the bytes of a response body: set by a handler
// for an answer it never wrote, they would cut short or mislabel the
// rejection written in its place.
var framingHeaders = [...]string{"Content-Length", "Content-Encoding", "Content-Range", "Transfer-Encoding"}
