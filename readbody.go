package boundhttp

import (
	"io"

	"github.com/boundhttp/boundhttp/internal/body"
)

// ReadBody reads r, a body, to its end and returns the bytes, as [io.ReadAll]
// does. For a whole body that a [Transport] returned (resp.Body) or that
// [Middleware] handed a handler (r.Body), it takes the verified bytes
// without io.ReadAll's copies: a body held in one piece is handed over as
// it is, a larger one is joined once into a slice of exactly its size and
// its pooled memory is released at once. io.ReadAll instead copies the body
// into growing buffers and then once more into its result, about twice the
// body's size in allocations on top of the memory the Transport already
// holds until Close. The body's in-flight charge (Transport.InFlight,
// MiddlewareConfig.InFlight) ends here: the bytes returned are the caller's,
// like bytes copied out, and are no longer counted.
//
// Any other reader (a streaming body, a body that http.Client wrapped
// because Client.Timeout is set) is read with io.ReadAll, with one
// difference: on an error ReadBody returns no bytes, never the prefix read
// before it (whole or nothing, as the Transport's whole-body mode). ReadBody
// does not close r; the caller still does.
func ReadBody(r io.Reader) ([]byte, error) {
	if b, ok := r.(*body.Body); ok && b.Whole() {
		return b.Take()
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return data, nil
}
