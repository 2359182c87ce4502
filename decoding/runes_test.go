package decoding

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestRunesBoundary: exactly N characters pass a character cap of N, N+1
// fail, for text of 1- to 4-byte characters, whatever the read size.
func TestRunesBoundary(t *testing.T) {
	t.Parallel()
	const limit = 1000
	for _, ch := range []string{"a", "é", "€", "😀"} {
		for _, c := range codings {
			for _, tt := range []struct {
				n     int
				stage string
			}{{0, ""}, {1, ""}, {limit - 1, ""}, {limit, ""}, {limit + 1, "runes"}, {10 * limit, "runes"}} {
				data := []byte(strings.Repeat(ch, tt.n))
				b := limits.Budget{MaxDecodedRunes: limit}
				got, err := decodeAll(t, encode(t, c, data), c, b)
				if stageOf(err) != tt.stage {
					t.Errorf("ReadAll(%d × %q, %s, cap %d characters) = %v, want stage %q", tt.n, ch, c, limit, err, tt.stage)
					continue
				}
				if err == nil && !bytes.Equal(got, data) {
					t.Errorf("ReadAll(%d × %q, %s) returned different bytes", tt.n, ch, c)
				}
				var e *limits.Error
				if errors.As(err, &e) && (e.Limit != limit || e.Observed != limit+1) {
					t.Errorf("ReadAll(%d × %q): %+v, want observed %d", tt.n, ch, e, limit+1)
				}
				// Streaming with tiny reads splits characters across reads.
				d, _ := NewReader(bytes.NewReader(encode(t, c, data)), c, b)
				out, err := readAllChunks(d, 3)
				if err.Error() == "EOF" {
					err = nil
				}
				if stageOf(err) != tt.stage || (err == nil && !bytes.Equal(out, data)) {
					t.Errorf("streaming %d × %q in reads of 3: %d bytes, %v; want stage %q", tt.n, ch, len(out), err, tt.stage)
				}
			}
		}
	}
	// The byte cap still applies below the character cap.
	if _, err := decodeAll(t, []byte(strings.Repeat("😀", 100)), "", limits.Budget{MaxDecodedRunes: 1000, MaxDecodedBytes: 399}); stageOf(err) != "decoded" {
		t.Errorf("100 four-byte characters, 399-byte cap: %v, want stage decoded", err)
	}
}
