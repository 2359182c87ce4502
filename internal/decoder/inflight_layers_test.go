package decoder

import (
	"bytes"
	"io"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

// zstdWindowed compresses data into one zstd frame declaring a window of
// window bytes (not single-segment: the window field is explicit).
func zstdWindowed(t testing.TB, data []byte, window int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithWindowSize(window), zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(data)
	zw.Close()
	return buf.Bytes()
}

// TestInFlightZstdTwoLayers: "zstd, zstd" runs two zstd decoders, each with
// its own state and window, so the body is charged both. The charge of a
// zstd window was kept per Reader, not per layer: the second layer's
// decoder was charged neither its ZstdState nor its window (only the part
// of it above the first layer's), so two decoders allocated what one was
// charged.
func TestInFlightZstdTwoLayers(t *testing.T) {
	t.Parallel()
	const window = 1 << 20
	data := text(3 << 20)
	body := zstdWindowed(t, zstdWindowed(t, data, window), window)
	f := limits.NewInFlight(64 << 20)
	d, err := NewReader(bytes.NewReader(body), "zstd, zstd", limits.Budget{MaxDecodedBytes: 8 << 20}, WithInFlight(f))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := io.Copy(&out, d); err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("decoding zstd, zstd: %d bytes, %v", out.Len(), err)
	}
	d.Close()
	if want := int64(2 * (ZstdState + window)); f.Peak() < want {
		t.Errorf("Peak() = %d for two zstd decoders with %d-byte windows, want at least %d", f.Peak(), window, want)
	}
	if f.InUse() != 0 {
		t.Errorf("InUse() = %d after Close, want 0", f.InUse())
	}
}
