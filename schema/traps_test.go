package schema

import (
	"testing"
)

// TestWorstCasePythonWholeFloatInExponentForm pins the trap of counting a
// whole number as its digits plus 3: Python writes a whole float from 1e16
// up in exponent form (repr), so -12345678901234568.0, valid for an integer
// with minimum -1e17 and for the const -12345678901234568, is sent as
// -1.2345678901234568e+16: 23 bytes, while the digits plus 3 are 21 and 20.
func TestWorstCasePythonWholeFloatInExponentForm(t *testing.T) {
	t.Parallel()
	neg := rawNumber("-1.2345678901234568e+16") // Python's repr of the float
	pos := rawNumber("1.2345678901234568e+16")
	for _, tt := range []struct {
		schema string
		v      any
	}{
		{`{"type":"integer","minimum":-1e17,"maximum":0}`, neg},
		{`{"type":"integer","minimum":-1e17,"maximum":1e17}`, neg},
		{`{"type":"integer","exclusiveMinimum":-1e17,"maximum":5}`, neg},
		{`{"type":"integer","minimum":0,"maximum":99999999999999999}`, pos},
		{`{"const":-12345678901234568}`, neg},
		{`{"enum":[1,12345678901234568]}`, pos},
		{`{"type":"array","maxItems":2,"items":{"type":"integer","minimum":-1e18,"maximum":0}}`, []any{neg, neg}},
	} {
		checkNotBelow(t, tt.schema, Options{}, tt.v)
	}
}
