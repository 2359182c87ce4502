package probe

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"strings"
)

// The JSON body: an MCP cancellation of a request that does not exist (a
// JSON-RPC notification that MCP servers accept and ignore: the official Go
// SDK answers an unknown notification 400, a cancellation 202), whose
// reason is padding sized so that the whole document has exactly the
// requested length.
const (
	jsonPrefix = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"boundprobe-no-such-request","reason":"`
	jsonSuffix = `"}}`
)

// padByte fills bodies: printable, needing no JSON escape, compressible.
const padByte = 'a'

// A shape says how a body of a given decoded size is made.
type shape struct {
	// json makes a JSON document; otherwise the body is padByte repeated.
	json bool
	// gzip compresses the document with gzip.
	gzip bool
}

// minSize returns the smallest decoded size the shape can make.
func (s shape) minSize() int64 {
	if s.json {
		return int64(len(jsonPrefix) + len(jsonSuffix))
	}
	return 0 // an empty body: a path whose ceiling is 0 is measured, not unreachable
}

// coding returns the Content-Encoding of the shape's bodies, "" for none.
func (s shape) coding() string {
	if s.gzip {
		return "gzip"
	}
	return ""
}

// A body is one generated request body.
type body struct {
	// Decoded is the size in bytes after content decoding.
	Decoded int64
	// Wire is the size in bytes on the wire (the Content-Length).
	Wire int64
	// encoded holds the gzip bytes; nil for an identity body.
	encoded []byte
	shape   shape
}

// newBody returns the body of the shape with decoded size n, which must be
// at least s.minSize(). An identity body is generated as it is read; a gzip
// body is built here ([gzipRun]), so that its wire size is known before it
// is sent.
func newBody(s shape, n int64) (*body, error) {
	if n < s.minSize() {
		return nil, fmt.Errorf("probe: a body of this shape has at least %d bytes, not %d", s.minSize(), n)
	}
	b := &body{Decoded: n, Wire: n, shape: s}
	if !s.gzip {
		return b, nil
	}
	if s.json {
		b.encoded = gzipRun(jsonPrefix, n-int64(len(jsonPrefix)+len(jsonSuffix)), jsonSuffix)
	} else {
		b.encoded = gzipRun("", n, "")
	}
	b.Wire = int64(len(b.encoded))
	return b, nil
}

// decoded returns a reader of the decoded document.
func (b *body) decoded() io.Reader {
	if !b.shape.json {
		return &repeatReader{n: b.Decoded}
	}
	pad := b.Decoded - int64(len(jsonPrefix)+len(jsonSuffix))
	return io.MultiReader(strings.NewReader(jsonPrefix), &repeatReader{n: pad}, strings.NewReader(jsonSuffix))
}

// reader returns a reader of the bytes to send.
func (b *body) reader() io.Reader {
	if b.encoded != nil {
		return bytes.NewReader(b.encoded)
	}
	return b.decoded()
}

// padBlock is a run of padByte that bodies are copied from.
var padBlock = []byte(strings.Repeat(string(rune(padByte)), 32<<10))

// repeatReader reads n bytes of padByte.
type repeatReader struct{ n int64 }

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := 0; i < len(p); i += copy(p[i:], padBlock) {
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// isJSON reports whether the media type ct is JSON: application/json,
// text/json or any */*+json.
func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}
