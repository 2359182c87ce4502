package decoder

import (
	"bytes"
	"testing"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// encode compresses data with coding.
func encode(t testing.TB, coding string, data []byte) []byte {
	t.Helper()
	return testenc.Encode(coding, data)
}

// layered applies the codings of a Content-Encoding list in order.
func layered(t testing.TB, data []byte, codings ...string) []byte {
	t.Helper()
	return testenc.Layered(data, codings...)
}

var codings = testenc.Codings

// text is a deterministic, moderately compressible body.
func text(n int) []byte { return testenc.Text(n) }

var stageOf = testenc.StageOf

var cpuPerOp = testenc.CPUPerOp

// decodeAll runs ReadAll and checks the whole-or-nothing rule.
func decodeAll(t testing.TB, body []byte, ce string, b limits.Budget, opts ...Option) ([]byte, error) {
	t.Helper()
	got, err := ReadAll(bytes.NewReader(body), ce, b, opts...)
	if err != nil && got != nil {
		t.Fatalf("ReadAll(%s) returned %d bytes with error %v, want none", ce, len(got), err)
	}
	return got, err
}
