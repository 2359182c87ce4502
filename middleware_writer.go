package boundhttp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
)

// trackingWriter records whether the handler wrote, so that the middleware
// answers a streaming breach only on a clean response. The handler never
// sees it bare: [trackWrites] wraps it in a type with exactly the optional
// interfaces of the writer underneath.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *trackingWriter) WriteHeader(code int) {
	if code >= 200 {
		w.wrote = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *trackingWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// WriteString writes s, through the underlying writer's WriteString if it
// has one. Offering it when the underlying writer does not changes nothing:
// io.WriteString would call Write.
func (w *trackingWriter) WriteString(s string) (int, error) {
	w.wrote = true
	return io.WriteString(w.ResponseWriter, s)
}

// FlushError flushes as [http.ResponseController] does, and counts as
// writing: the headers it sends start the answer. Every writer has it, not
// only one that offers Flusher: the controller would otherwise reach the
// server's writer through Unwrap (past a wrapper underneath that has only
// Unwrap) and flush without this writer knowing. A writer that cannot
// flush returns http.ErrNotSupported and has not written.
func (w *trackingWriter) FlushError() error {
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if !errors.Is(err, http.ErrNotSupported) {
		w.wrote = true
	}
	return err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// The optional interfaces, each offered only when the underlying writer has
// it: a handler that asks w.(http.Flusher) or w.(http.Hijacker) must get
// the true answer (an event stream checks Flusher to decide whether it can
// stream; io.Copy uses ReaderFrom for sendfile).
type (
	flusher    struct{ t *trackingWriter }
	hijacker   struct{ t *trackingWriter }
	readerFrom struct{ t *trackingWriter }
	pusher     struct{ t *trackingWriter }
)

func (f flusher) Flush() {
	f.t.wrote = true
	f.t.ResponseWriter.(http.Flusher).Flush()
}

// Hijack hands the connection to the handler, which then owns the answer.
func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.t.wrote = true
	return h.t.ResponseWriter.(http.Hijacker).Hijack()
}

func (r readerFrom) ReadFrom(src io.Reader) (int64, error) {
	r.t.wrote = true
	return r.t.ResponseWriter.(io.ReaderFrom).ReadFrom(src)
}

func (p pusher) Push(target string, opts *http.PushOptions) error {
	return p.t.ResponseWriter.(http.Pusher).Push(target, opts)
}

// trackWrites returns t as the handler's writer: t itself, or t with
// exactly those of Flusher, Hijacker, ReaderFrom and Pusher that the
// underlying writer implements.
func trackWrites(t *trackingWriter) http.ResponseWriter {
	var set int
	for i, ok := range [...]bool{
		implements[http.Flusher](t.ResponseWriter),
		implements[http.Hijacker](t.ResponseWriter),
		implements[io.ReaderFrom](t.ResponseWriter),
		implements[http.Pusher](t.ResponseWriter),
	} {
		if ok {
			set |= 1 << i
		}
	}
	switch set {
	case 0:
		return t
	case 1: // flusher
		return struct {
			*trackingWriter
			flusher
		}{t, flusher{t}}
	case 2: // hijacker
		return struct {
			*trackingWriter
			hijacker
		}{t, hijacker{t}}
	case 3: // flusher hijacker
		return struct {
			*trackingWriter
			flusher
			hijacker
		}{t, flusher{t}, hijacker{t}}
	case 4: // readerFrom
		return struct {
			*trackingWriter
			readerFrom
		}{t, readerFrom{t}}
	case 5: // flusher readerFrom
		return struct {
			*trackingWriter
			flusher
			readerFrom
		}{t, flusher{t}, readerFrom{t}}
	case 6: // hijacker readerFrom
		return struct {
			*trackingWriter
			hijacker
			readerFrom
		}{t, hijacker{t}, readerFrom{t}}
	case 7: // flusher hijacker readerFrom
		return struct {
			*trackingWriter
			flusher
			hijacker
			readerFrom
		}{t, flusher{t}, hijacker{t}, readerFrom{t}}
	case 8: // pusher
		return struct {
			*trackingWriter
			pusher
		}{t, pusher{t}}
	case 9: // flusher pusher
		return struct {
			*trackingWriter
			flusher
			pusher
		}{t, flusher{t}, pusher{t}}
	case 10: // hijacker pusher
		return struct {
			*trackingWriter
			hijacker
			pusher
		}{t, hijacker{t}, pusher{t}}
	case 11: // flusher hijacker pusher
		return struct {
			*trackingWriter
			flusher
			hijacker
			pusher
		}{t, flusher{t}, hijacker{t}, pusher{t}}
	case 12: // readerFrom pusher
		return struct {
			*trackingWriter
			readerFrom
			pusher
		}{t, readerFrom{t}, pusher{t}}
	case 13: // flusher readerFrom pusher
		return struct {
			*trackingWriter
			flusher
			readerFrom
			pusher
		}{t, flusher{t}, readerFrom{t}, pusher{t}}
	case 14: // hijacker readerFrom pusher
		return struct {
			*trackingWriter
			hijacker
			readerFrom
			pusher
		}{t, hijacker{t}, readerFrom{t}, pusher{t}}
	case 15: // flusher hijacker readerFrom pusher
		return struct {
			*trackingWriter
			flusher
			hijacker
			readerFrom
			pusher
		}{t, flusher{t}, hijacker{t}, readerFrom{t}, pusher{t}}
	}
	panic("unreachable")
}

// implements reports whether w has the methods of I.
func implements[I any](w http.ResponseWriter) bool {
	_, ok := w.(I)
	return ok
}
