package boundhttp

import (
	"mime"
	"net/http"

	"github.com/boundhttp/boundhttp/limits"
)

// An event stream (Content-Type text/event-stream) is capped per event,
// not as a whole: it is a session's channel, open for as long as the
// session lives (an MCP streamable-HTTP server's GET stream carries every
// notification and keep-alive ping), and what a client holds at once is
// one event, which it buffers until the blank line that ends it. So each
// event, from its first byte to the end of the blank line that ends it, may
// have at most the cap's bytes; a longer one is a breach, answered like
// any other (500 if nothing was sent, else the stream is aborted).

// declaresEventStream reports whether h declares an event stream.
func declaresEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// eventState is where an event stream's bytes stand: the bytes of the
// event in progress, whether the last byte ended a line, and whether it was
// the CR of a blank line, whose LF (if one follows) still belongs to the
// event it ends.
type eventState struct {
	n     int64 // bytes of the event in progress
	atEOL bool  // the last byte ended a line
	cr    bool  // ... and was a CR
	end   bool  // ... that ended the event: it ends after an LF, if one follows
}

// scan advances s over p; it returns the breach of the first event that
// passes limit, with s unchanged, or nil.
func (s *eventState) scan(p []byte, limit int64) *limits.Error {
	t := *s
	for _, b := range p {
		if t.end {
			if b == '\n' && t.cr {
				// The LF of the CRLF that ended the event: counted in it.
				if t.n++; t.n > limit {
					return &limits.Error{Stage: limits.StageResponse, Limit: limit, Observed: t.n}
				}
				t.n, t.atEOL, t.cr, t.end = 0, false, false, false
				continue
			}
			t.n, t.atEOL, t.cr, t.end = 0, false, false, false
		}
		if b == '\n' && t.cr {
			t.cr = false // the LF of a CRLF: same line ending, counted below
			t.n++
			if t.n > limit {
				return &limits.Error{Stage: limits.StageResponse, Limit: limit, Observed: t.n}
			}
			continue
		}
		t.n++
		if t.n > limit {
			return &limits.Error{Stage: limits.StageResponse, Limit: limit, Observed: t.n}
		}
		switch b {
		case '\n', '\r':
			t.cr = b == '\r'
			if t.atEOL {
				// A blank line: the event ends with it (after the LF of a
				// CRLF, if one follows).
				if t.cr {
					t.end = true
				} else {
					t.n, t.atEOL = 0, false
				}
				continue
			}
			t.atEOL = true
		default:
			t.atEOL, t.cr = false, false
		}
	}
	*s = t
	return nil
}
