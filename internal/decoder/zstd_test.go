package decoder

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

// windowBomb is a valid zstd frame of a few bytes that declares a window of
// 1<<(10+exp) bytes and holds blocks raw blocks of 1 KiB of 'a'.
func windowBomb(exp byte, blocks int) []byte {
	b := binary.LittleEndian.AppendUint32(nil, zstdMagic)
	b = append(b, 0x00, exp<<3) // no FCS, not single segment, no checksum; window descriptor
	for i := range blocks {
		last := uint32(0)
		if i == blocks-1 {
			last = 1
		}
		h := last | 0<<1 | 1024<<3 // raw block of 1024 bytes
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
		b = append(b, bytes.Repeat([]byte("a"), 1024)...)
	}
	return b
}

// TestZstdWindowBomb: a frame declaring a 256 MiB window is rejected at the
// window stage before the decoder allocates the window. The raw decoder,
// whose default cap allows it, allocates the whole window for 1 KiB of
// content; the bounded Reader allocates almost nothing.
func TestZstdWindowBomb(t *testing.T) {
	bomb := windowBomb(18, 1) // 256 MiB window
	raw := allocated(func() {
		d, err := zstd.NewReader(bytes.NewReader(bomb), zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, d)
		d.Close()
		if err != nil || n != 1024 {
			t.Fatalf("raw decoder: %d bytes, %v; want the 1024 bytes of a valid frame", n, err)
		}
	})
	var err error
	ours := allocated(func() {
		_, err = ReadAll(bytes.NewReader(bomb), "zstd", limits.Budget{})
	})
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageWindow || e.Observed != 256<<20 || e.Limit != limits.DefaultMaxWindowBytes || !e.Declared {
		t.Fatalf("ReadAll(zstd 256 MiB window bomb) = %v, want stage window, declared 256 MiB", err)
	}
	t.Logf("allocated: raw decoder %d bytes, bounded Reader %d bytes", raw, ours)
	if raw < 256<<20 {
		t.Errorf("raw decoder allocated %d bytes; the bomb no longer demonstrates a window allocation", raw)
	}
	if ours > 1<<20 {
		t.Errorf("bounded Reader allocated %d bytes for a rejected window bomb, want < 1 MiB", ours)
	}
}

func TestZstdWindowBoundary(t *testing.T) {
	t.Parallel()
	// exp 13 declares an 8 MiB window, the default limit.
	for _, tt := range []struct {
		exp    byte
		window int64
		stage  string
	}{
		{0, 1 << 10, "window"},
		{12, 4 << 20, ""},
		{13, 8 << 20, ""},
		{14, 16 << 20, "window"},
		{31, 1 << 41, "window"},
	} {
		b := limits.Budget{}
		if tt.exp == 0 {
			b.MaxWindowBytes = 1<<10 - 1
		}
		_, err := decodeAll(t, windowBomb(tt.exp, 2), "zstd", b)
		if stageOf(err) != tt.stage {
			t.Errorf("ReadAll(zstd window %d, limit %d) = %v, want stage %q", tt.window, b.WithDefaults().MaxWindowBytes, err, tt.stage)
		}
	}
	// A budget above 8 MiB admits the 16 MiB window.
	if _, err := decodeAll(t, windowBomb(14, 2), "zstd", limits.Budget{MaxWindowBytes: 16 << 20}); err != nil {
		t.Errorf("ReadAll(zstd window 16 MiB, limit 16 MiB) = %v, want nil", err)
	}
}

// TestZstdDeclaredContentSize: a frame that declares more content than the
// decoded limit is rejected from its header.
func TestZstdDeclaredContentSize(t *testing.T) {
	t.Parallel()
	enc, _ := zstd.NewWriter(nil)
	const limit = 100000
	for _, tt := range []struct {
		size  int
		stage string
	}{{limit, ""}, {limit + 1, "decoded"}} {
		body := enc.EncodeAll(bytes.Repeat([]byte("b"), tt.size), nil) // EncodeAll writes the content size
		src := &countingReader{r: bytes.NewReader(body)}
		d, _ := NewReader(src, "zstd", limits.Budget{MaxDecodedBytes: limit, MaxWindowBytes: 1 << 20})
		buf := make([]byte, 10)
		_, err := d.Read(buf) // a single small read sees the verdict from the header
		if tt.stage == "" {
			_, err = d.ReadAll()
		}
		if stageOf(err) != tt.stage {
			t.Errorf("zstd frame declaring %d bytes, limit %d: %v, want stage %q", tt.size, limit, err, tt.stage)
		}
		var e *limits.Error
		if errors.As(err, &e) && (!e.Declared || e.Observed != int64(tt.size)) {
			t.Errorf("zstd frame declaring %d bytes: %+v, want declared observed %d", tt.size, e, tt.size)
		}
	}
	// Declarations of several frames add up.
	two := append(enc.EncodeAll(bytes.Repeat([]byte("b"), 60000), nil), enc.EncodeAll(bytes.Repeat([]byte("c"), 60000), nil)...)
	if _, err := decodeAll(t, two, "zstd", limits.Budget{MaxDecodedBytes: limit}, WithMaxMembers(2)); stageOf(err) != "decoded" {
		t.Errorf("two zstd frames declaring 60000 each, limit %d: %v, want stage decoded", limit, err)
	}
}

func TestZstdSkippableFrames(t *testing.T) {
	t.Parallel()
	data := text(5000)
	skip := binary.LittleEndian.AppendUint32(nil, 0x184D2A5E)
	skip = binary.LittleEndian.AppendUint32(skip, 3)
	skip = append(skip, "abc"...)
	body := append(append([]byte(nil), skip...), encode(t, "zstd", data)...)
	if _, err := decodeAll(t, body, "zstd", limits.Budget{}); stageOf(err) != "integrity" {
		t.Errorf("skippable + data frame, default: %v, want stage integrity", err)
	}
	got, err := decodeAll(t, body, "zstd", limits.Budget{}, WithMaxMembers(2))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("skippable + data frame, 2 members: %d bytes, %v; want %d bytes", len(got), err, len(data))
	}
}

// TestZstdHugeMaxWindowIsNotAVerdict pins the trap "a knob that becomes a
// verdict": a MaxWindowBytes above what the zstd decoder's
// WithDecoderMaxWindow accepts (~3.75 TB) made every valid zstd body fail as
// integrity. A configuration value is never a verdict on a valid body: the
// decoder's cap is clamped.
func TestZstdHugeMaxWindowIsNotAVerdict(t *testing.T) {
	t.Parallel()
	data := text(100 << 10)
	body := encode(t, "zstd", data)
	for _, w := range []int64{1, 1 << 10, 8 << 20, zstdMaxDecoderWindow - 1, zstdMaxDecoderWindow,
		zstdMaxDecoderWindow + 1, 1 << 50, math.MaxInt64 - 1, math.MaxInt64} {
		b := limits.Budget{MaxWindowBytes: w}
		got, err := decodeAll(t, body, "zstd", b)
		if w < 128<<10 {
			// The body's own window is larger: a window verdict, never integrity.
			if stageOf(err) != "window" {
				t.Errorf("MaxWindowBytes %d: ReadAll = %v, want stage window", w, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("MaxWindowBytes %d: ReadAll = %d bytes, %v, want the body", w, len(got), err)
		}
	}
}
