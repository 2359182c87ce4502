package decoder

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestRunesBoundary: exactly N characters pass a character cap of N, N+1
// fail, for text of 1- to 4-byte characters, whatever the read size.
func TestRunesBoundary(t *testing.T) {
	t.Parallel()
	limit := 1000
	if testing.Short() {
		limit = 200 // every boundary is still walked; tiny reads dominate under -race
	}
	for _, ch := range []string{"a", "é", "€", "😀"} {
		for _, c := range codings {
			for _, tt := range []struct {
				n     int
				stage string
			}{{0, ""}, {1, ""}, {limit - 1, ""}, {limit, ""}, {limit + 1, "runes"}, {10 * limit, "runes"}} {
				data := []byte(strings.Repeat(ch, tt.n))
				b := limits.Budget{MaxDecodedRunes: int64(limit)}
				got, err := decodeAll(t, encode(t, c, data), c, b)
				if stageOf(err) != tt.stage {
					t.Errorf("ReadAll(%d × %q, %s, cap %d characters) = %v, want stage %q", tt.n, ch, c, limit, err, tt.stage)
					continue
				}
				if err == nil && !bytes.Equal(got, data) {
					t.Errorf("ReadAll(%d × %q, %s) returned different bytes", tt.n, ch, c)
				}
				var e *limits.Error
				if errors.As(err, &e) && (e.Limit != int64(limit) || e.Observed != int64(limit)+1) {
					t.Errorf("ReadAll(%d × %q): %+v, want observed %d", tt.n, ch, e, limit+1)
				}
				// Streaming with tiny reads splits characters across reads.
				d, _ := NewReader(bytes.NewReader(encode(t, c, data)), c, b)
				out, err := readInPieces(d, 3)
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

// TestRunesCapContinuationAmplification pins the trap of a character cap
// that, near its end, asked the decoder for one byte past the remaining
// characters: continuation bytes count as no character, so 4 MiB of them
// after 9 characters under a cap of 10 took one Read per byte (4 Mi reads,
// about half a second of CPU per body). The source must be read in pieces
// (at most one Read per 512 bytes), and the body, 9 characters, still pass
// whole; with an 11th character at the end it fails at the cap.
func TestRunesCapContinuationAmplification(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	data := append(bytes.Repeat([]byte("a"), 9), bytes.Repeat([]byte{0x80}, size)...)
	b := limits.Budget{MaxDecodedRunes: 10, MaxWireBytes: 8 << 20, MaxDecodedBytes: 8 << 20}
	const maxReads = size / 512
	for _, tt := range []struct {
		name  string
		tail  string
		stage string
	}{{"9 characters", "", ""}, {"10 characters", "b", ""}, {"11 characters", "bc", "runes"}} {
		body := append(slices.Clip(data), tt.tail...)
		src := &countingReader{r: bytes.NewReader(body)}
		got, err := ReadAll(src, "", b)
		if stageOf(err) != tt.stage || (err == nil && !bytes.Equal(got, body)) {
			t.Errorf("ReadAll(%s, 4 MiB of continuation bytes): %d bytes, %v; want stage %q and the body", tt.name, len(got), err, tt.stage)
		}
		if src.reads > maxReads {
			t.Errorf("ReadAll(%s, 4 MiB of continuation bytes): %d reads of the source, want at most %d", tt.name, src.reads, maxReads)
		}
		var e *limits.Error
		if errors.As(err, &e) && (e.Limit != 10 || e.Observed != 11) {
			t.Errorf("ReadAll(%s): %+v, want limit 10, observed 11", tt.name, e)
		}
		// Streaming, with the caller's buffer of 32 KiB.
		src = &countingReader{r: bytes.NewReader(body)}
		d, err := NewReader(src, "", b)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 32<<10)
		var runes int64
		err = errors.New("no end after 2×maxReads Reads")
		for range 2 * maxReads {
			n, rerr := d.Read(buf)
			runes += countRunes(buf[:n])
			if rerr != nil {
				err = rerr
				break
			}
		}
		if err == io.EOF {
			err = nil
		}
		if stageOf(err) != tt.stage || runes > 10 {
			t.Errorf("streaming %s: %d characters returned, %v; want at most 10, stage %q", tt.name, runes, err, tt.stage)
		}
		if src.reads > maxReads {
			t.Errorf("streaming %s: %d reads of the source, want at most %d", tt.name, src.reads, maxReads)
		}
	}
}
