package decoding

import (
	"bytes"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

func TestSmoke(t *testing.T) {
	data := text(100000)
	for _, c := range codings {
		enc := encode(t, c, data)
		got, err := ReadAll(bytes.NewReader(enc), c, limits.Budget{})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: err %v len %d", c, err, len(got))
		}
		bomb := encode(t, c, bytes.Repeat([]byte("a"), 2<<20))
		got, err = ReadAll(bytes.NewReader(bomb), c, limits.Budget{MaxDecodedBytes: 64 << 10})
		t.Logf("%s: bomb %d bytes: %v (len %d)", c, len(bomb), err, len(got))
	}
}
