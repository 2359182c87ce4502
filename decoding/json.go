package decoding

import (
	"io"

	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// CheckJSON reads r to the end and reports whether it is one well-formed
// JSON document within the shape limits l. A breach is a [*limits.Error]
// of stage [limits.StageJSON] naming the limit (Field) and where it tripped
// (Pointer); a syntax error is one of stage [limits.StageIntegrity] with
// Field "syntax". No error text carries body content: syntax errors give
// the byte offset and the class of the offending byte ("a letter", "a
// control byte"), never the byte, and the pointer, whose keys the document
// chose, reaches text only through [limits.EchoPointer]. It streams: memory is bounded by l.MaxDepth and the
// object keys on the current path, not by the document's size. Errors of r
// pass through; if r returns no bytes and no error 100 times in a row,
// CheckJSON gives up with io.ErrNoProgress, and one that returns a count
// outside [0, len(p)] is an error too.
func CheckJSON(r io.Reader, l limits.JSON) error { return decoder.CheckJSON(r, l) }

// A JSONChecker checks a JSON document fed to it in pieces through Write;
// Close reports whether the document ended well. The first error is
// sticky. It is not safe for concurrent use.
type JSONChecker struct {
	c decoder.JSONChecker
}

// NewJSONChecker returns a checker for l, or an error if l is invalid.
func NewJSONChecker(l limits.JSON) (*JSONChecker, error) {
	c := new(JSONChecker)
	if err := c.c.Reset(l); err != nil {
		return nil, err
	}
	return c, nil
}

// Write feeds the next bytes of the document. It returns len(p) and nil, or
// the first breach or syntax error.
func (c *JSONChecker) Write(p []byte) (int, error) { return c.c.Write(p) }

// Close reports whether the bytes written form exactly one complete
// document.
func (c *JSONChecker) Close() error { return c.c.Close() }
