package probe

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"testing"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestBodySizes checks that every shape makes bodies of exactly the size
// asked for, that JSON bodies are valid JSON, and that a gzip body decodes
// to the identity body of the same size with Wire its real length.
func TestBodySizes(t *testing.T) {
	t.Parallel()
	for _, s := range []shape{{}, {json: true}, {gzip: true}, {json: true, gzip: true}} {
		min := s.minSize()
		for _, n := range []int64{min, min + 1, min + 2, 1000, 1 << 20, 1<<20 + 1} {
			b, err := newBody(s, n)
			if err != nil {
				t.Fatalf("%+v %d: %v", s, n, err)
			}
			raw, _ := io.ReadAll(b.reader())
			if int64(len(raw)) != b.Wire {
				t.Errorf("%+v %d: %d bytes sent, Wire %d", s, n, len(raw), b.Wire)
			}
			doc := raw
			if s.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				doc, err = io.ReadAll(zr)
				if err != nil {
					t.Fatal(err)
				}
				// The server side's decoder: exactly n decoded bytes, verified.
				got, err := decoding.ReadAll(bytes.NewReader(raw), "gzip", limits.Budget{MaxWireBytes: b.Wire, MaxDecodedBytes: n})
				if err != nil || !bytes.Equal(got, doc) {
					t.Errorf("%+v %d: decoding.ReadAll: %d bytes, %v", s, n, len(got), err)
				}
				if _, err := decoding.ReadAll(bytes.NewReader(raw), "gzip", limits.Budget{MaxWireBytes: b.Wire, MaxDecodedBytes: n - 1}); n > 1 && testenc.StageOf(err) != "decoded" {
					t.Errorf("%+v %d: decoded limit %d: %v, want stage decoded", s, n, n-1, err)
				}
				if b.Wire >= b.Decoded/100 && n > 1000 {
					t.Errorf("%+v %d: wire %d, not compressible", s, n, b.Wire)
				}
			}
			if int64(len(doc)) != n || b.Decoded != n {
				t.Errorf("%+v %d: decoded %d bytes, Decoded %d", s, n, len(doc), b.Decoded)
			}
			if !s.json && !bytes.Equal(doc, bytes.Repeat([]byte{padByte}, int(n))) {
				t.Errorf("%+v %d: not a run of %q", s, n, padByte)
			}
			if s.json && !json.Valid(doc) {
				t.Errorf("%+v %d: not valid JSON: %.100s", s, n, doc)
			}
		}
		if _, err := newBody(s, min-1); err == nil {
			t.Errorf("%+v: a body of %d bytes (below the minimum) was made", s, min-1)
		}
	}
}

// TestGzipDeterministic checks that the same decoded size gives the same
// gzip bytes, so that the wire size reported is the one sent again.
func TestGzipDeterministic(t *testing.T) {
	t.Parallel()
	s := shape{json: true, gzip: true}
	a, _ := newBody(s, 12345)
	b, _ := newBody(s, 12345)
	if !bytes.Equal(a.encoded, b.encoded) {
		t.Error("two gzip bodies of 12345 bytes differ")
	}
}
