package boundhttp

import (
	"io"
	"mime"
	"strings"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/limits"
)

// isJSON reports whether a Content-Type names JSON: application/json,
// text/json or any type with the +json suffix (RFC 6839). Malformed
// parameters do not hide the type: "application/json; charset" is JSON, so
// that a sloppy or hostile sender cannot skip the shape check with them.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// checkJSONChunks checks a whole body held in chunks. An empty body (no
// decoded bytes) is no body, as net/http presents a Content-Length of 0
// (http.NoBody, which the middleware hands on unchecked): it passes, and
// the handler decides what a bodiless request means.
func checkJSONChunks(chunks chunk.List, l limits.JSON) error {
	if chunks.Size() == 0 {
		return nil
	}
	c, err := decoding.NewJSONChecker(l)
	if err != nil {
		return err
	}
	for i := range chunks.Len() {
		if _, err := c.Write(chunks.Chunk(i)); err != nil {
			return err
		}
	}
	return c.Close()
}

// jsonCheckReader checks a streamed body as it is read: a breach is
// returned instead of the bytes that caused it, and io.EOF only after the
// document ended well. A body that ends with no bytes at all is no body,
// as for [checkJSONChunks]: it ends with io.EOF unchecked.
//
// The body's read guard admits one Read at a time only while the body is
// read, not while the checker runs, so the checker has a flag of its own: a
// Read that overlaps another fails with errConcurrentRead before it reads.
type jsonCheckReader struct {
	io.ReadCloser
	c     *decoding.JSONChecker
	some  bool // a byte of the body was read
	busy  atomic.Bool
	usage *usageCell // the body's usage record (Transport), or nil
	err   error      // sticky: why the check rejected the body
}

func (j *jsonCheckReader) Read(p []byte) (int, error) {
	if !j.busy.CompareAndSwap(false, true) {
		return 0, errConcurrentRead
	}
	defer j.busy.Store(false)
	if j.err != nil {
		return 0, j.err
	}
	n, err := j.ReadCloser.Read(p)
	if n > 0 {
		j.some = true
	}
	if _, cerr := j.c.Write(p[:n]); cerr != nil {
		return 0, j.reject(cerr)
	}
	if err == io.EOF && j.some {
		if cerr := j.c.Close(); cerr != nil {
			return 0, j.reject(cerr)
		}
	}
	return n, err
}

// reject makes err sticky and records that the body was not accepted: the
// body underneath may have recorded its verified end before the check ran.
func (j *jsonCheckReader) reject(err error) error {
	j.err = err
	if j.usage != nil {
		u, _ := j.usage.get()
		j.usage.set(u, false)
	}
	return err
}
