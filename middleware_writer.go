package boundhttp

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
)

// The ResponseWriters the Middleware hands a handler are one family: a
// writerCore decides what each write path does (count, hold, record that
// the handler wrote), and [wrapWriter] presents it with exactly the optional
// interfaces of the writer it wraps, as chi's middleware.WrapResponseWriter
// does for every chi middleware. A handler that asks w.(http.Flusher),
// w.(http.Hijacker), w.(io.ReaderFrom) or w.(http.Pusher) gets the true
// answer of the server's writer underneath (an event stream checks Flusher
// to decide whether it can stream; io.Copy uses ReaderFrom for sendfile; a
// hijack on HTTP/2 must be refused before it is tried), and
// [http.ResponseController] reaches that writer through Unwrap.
//
// Two cores exist: trackingWriter (streaming mode: did the handler write?)
// and capWriter (the response cap: count, hold, refuse). They stack: with
// both, the handler writes to the cap, the cap to the tracker, the tracker
// to the server's writer, and each layer keeps the interfaces of the next.

// writerCore is one member of the family: a ResponseWriter with the
// behaviour of each optional path, reached by wrapWriter's adapters only
// when the underlying writer (Unwrap) has that path.
type writerCore interface {
	http.ResponseWriter
	io.StringWriter
	// Unwrap returns the writer underneath, for http.ResponseController
	// and for wrapWriter's choice of interfaces.
	Unwrap() http.ResponseWriter
	// FlushError flushes as http.ResponseController does. Every member has
	// it, not only one over a Flusher: the controller calls it before it
	// unwraps, so a flush always passes through the core.
	FlushError() error
	readFrom(src io.Reader) (int64, error)
	hijack() (net.Conn, *bufio.ReadWriter, error)
	push(target string, opts *http.PushOptions) error
}

// The adapters that give a core one optional interface each.
type (
	flusher    struct{ c writerCore }
	hijacker   struct{ c writerCore }
	readerFrom struct{ c writerCore }
	pusher     struct{ c writerCore }
)

func (f flusher) Flush() { f.c.FlushError() }

func (h hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) { return h.c.hijack() }

func (r readerFrom) ReadFrom(src io.Reader) (int64, error) { return r.c.readFrom(src) }

func (p pusher) Push(target string, opts *http.PushOptions) error { return p.c.push(target, opts) }

// wrapWriter returns c as the handler's writer: c itself, or c with exactly
// those of Flusher, Hijacker, ReaderFrom and Pusher that c.Unwrap() has.
func wrapWriter(c writerCore) http.ResponseWriter {
	w := c.Unwrap()
	var set int
	for i, ok := range [...]bool{
		implements[http.Flusher](w),
		implements[http.Hijacker](w),
		implements[io.ReaderFrom](w),
		implements[http.Pusher](w),
	} {
		if ok {
			set |= 1 << i
		}
	}
	f, h, r, p := flusher{c}, hijacker{c}, readerFrom{c}, pusher{c}
	switch set {
	case 0:
		return c
	case 1:
		return struct {
			writerCore
			flusher
		}{c, f}
	case 2:
		return struct {
			writerCore
			hijacker
		}{c, h}
	case 3:
		return struct {
			writerCore
			flusher
			hijacker
		}{c, f, h}
	case 4:
		return struct {
			writerCore
			readerFrom
		}{c, r}
	case 5:
		return struct {
			writerCore
			flusher
			readerFrom
		}{c, f, r}
	case 6:
		return struct {
			writerCore
			hijacker
			readerFrom
		}{c, h, r}
	case 7:
		return struct {
			writerCore
			flusher
			hijacker
			readerFrom
		}{c, f, h, r}
	case 8:
		return struct {
			writerCore
			pusher
		}{c, p}
	case 9:
		return struct {
			writerCore
			flusher
			pusher
		}{c, f, p}
	case 10:
		return struct {
			writerCore
			hijacker
			pusher
		}{c, h, p}
	case 11:
		return struct {
			writerCore
			flusher
			hijacker
			pusher
		}{c, f, h, p}
	case 12:
		return struct {
			writerCore
			readerFrom
			pusher
		}{c, r, p}
	case 13:
		return struct {
			writerCore
			flusher
			readerFrom
			pusher
		}{c, f, r, p}
	case 14:
		return struct {
			writerCore
			hijacker
			readerFrom
			pusher
		}{c, h, r, p}
	default:
		return struct {
			writerCore
			flusher
			hijacker
			readerFrom
			pusher
		}{c, f, h, r, p}
	}
}

// implements reports whether w has the methods of I.
func implements[I any](w http.ResponseWriter) bool {
	_, ok := w.(I)
	return ok
}

// trackingWriter is the core that records whether the handler wrote, so
// that the middleware answers a streaming breach only on a clean response.
// The handler sees it through [trackWrites].
type trackingWriter struct {
	http.ResponseWriter
	wrote    bool
	hijacked bool // the handler took the connection: it is no longer ours
}

// trackWrites returns t as the handler's writer (see [wrapWriter]).
func trackWrites(t *trackingWriter) http.ResponseWriter { return wrapWriter(t) }

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
// has one.
func (w *trackingWriter) WriteString(s string) (int, error) {
	w.wrote = true
	return io.WriteString(w.ResponseWriter, s)
}

// FlushError flushes, and counts as writing: the headers it sends start the
// answer. A writer that cannot flush returns http.ErrNotSupported and has
// not written.
func (w *trackingWriter) FlushError() error {
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if !errors.Is(err, http.ErrNotSupported) {
		w.wrote = true
	}
	return err
}

// Unwrap returns the underlying writer.
func (w *trackingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *trackingWriter) readFrom(src io.Reader) (int64, error) {
	w.wrote = true
	return w.ResponseWriter.(io.ReaderFrom).ReadFrom(src)
}

// hijack hands the connection to the handler, which then owns the answer.
func (w *trackingWriter) hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.wrote = true
	conn, rw, err := w.ResponseWriter.(http.Hijacker).Hijack()
	w.hijacked = err == nil
	return conn, rw, err
}

func (w *trackingWriter) push(target string, opts *http.PushOptions) error {
	return w.ResponseWriter.(http.Pusher).Push(target, opts)
}
