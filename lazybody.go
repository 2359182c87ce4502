package boundhttp

import (
	"io"

	"github.com/boundhttp/boundhttp/limits"
)

// lazyBody is a whole-body mode body that is read, decoded and verified on
// first use instead of in RoundTrip. The Transport returns redirects with
// one: http.Client reads up to 2 KiB of a redirect's body and closes it
// before following, and a caller whose CheckRedirect returns
// http.ErrUseLastResponse may read it or not. Either way no byte is handed
// on before the whole body verified, and the work is bounded by the same
// budget as any other body; a body that is closed unread costs nothing.
//
// Close is safe to call from another goroutine while a Read is in
// progress; Read and WriteTo have one caller at a time.
type lazyBody struct {
	g    readGuard
	b    *bodyReader
	json *limits.JSON // shape check after decoding, or nil
	full *fullBody    // the verified body, after the first read
	err  error        // sticky: why the body was rejected
}

// open reads and verifies the whole body on first use.
func (l *lazyBody) open() error {
	if l.full != nil || l.err != nil {
		return l.err
	}
	chunks, err := l.b.readAll()
	if err == nil && l.json != nil {
		if err = checkJSONChunks(chunks, *l.json); err != nil {
			// readAll recorded the verified end; the check refused it.
			u, _ := l.b.c.get()
			l.b.c.set(u, false)
		}
	}
	// The connection is done with either way; the decoder goes back now.
	l.b.abort()
	l.b.release()
	if err != nil {
		chunks.Release()
		l.err = err
		return err
	}
	l.full = newFullBody(chunks, l.b.c)
	l.full.outer = &l.g // a Close of this body stops a WriteTo between writes
	return nil
}

func (l *lazyBody) Read(p []byte) (int, error) {
	if err := l.g.enter(); err != nil {
		return 0, err
	}
	var n int
	err := l.open()
	if err == nil {
		n, err = l.full.Read(p)
	}
	if l.g.leave() {
		l.release()
		if err != nil && err != io.EOF {
			err = errBodyClosed
		}
	}
	return n, err
}

// WriteTo writes the rest of the verified body to w.
func (l *lazyBody) WriteTo(w io.Writer) (int64, error) {
	if err := l.g.enter(); err != nil {
		return 0, err
	}
	var n int64
	err := l.open()
	if err == nil {
		n, err = l.full.WriteTo(w)
	}
	if l.g.leave() {
		l.release()
	}
	return n, err
}

// Close closes the body; a body never read is not read at all.
func (l *lazyBody) Close() error {
	first, release := l.g.close()
	if !first {
		return nil
	}
	// Make a blocked read of the connection return (a no-op once the
	// body was read: open has aborted it already).
	l.b.abort()
	if release {
		l.release()
	}
	return nil
}

// release frees whatever the body holds; only the guard's owner calls it.
func (l *lazyBody) release() {
	if l.full != nil {
		l.full.Close()
		return
	}
	l.b.release()
}

func (l *lazyBody) cell() *usageCell { return l.b.c }

var _ io.ReadCloser = (*lazyBody)(nil)
