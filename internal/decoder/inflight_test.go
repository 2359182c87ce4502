package decoder

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// brotliStall is the start of a standard brotli stream declaring a 16 MiB
// window (WBITS 24) whose first meta-block is uncompressed and 16 MiB long:
// on its fourth byte the brotli decoder allocates its whole ring buffer.
func brotliStall() []byte {
	return append([]byte{0xCF, 0xFF, 0xFF, 0xFF}, "xxxxxxxx"...)
}

func TestBrotliWindowBits(t *testing.T) {
	t.Parallel()
	data := text(64 << 10)
	for lgwin := 10; lgwin <= 24; lgwin++ {
		var buf bytes.Buffer
		w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 5, LGWin: lgwin})
		w.Write(data)
		w.Close()
		if got, ok := brotliWindowBits(buf.Bytes()[:1]); !ok || got != uint(lgwin) {
			t.Errorf("brotliWindowBits(lgwin %d stream) = %d, %v, want %d", lgwin, got, ok, lgwin)
		}
	}
	for _, tt := range []struct {
		hdr  []byte
		bits uint
		ok   bool
	}{
		{nil, 0, false},
		{[]byte{0x00}, 16, true},
		{[]byte{0x01}, 17, true},
		{brotliStall(), 24, true},
		{[]byte{0x11}, 0, false},
		{largeWindowEmpty(30), 30, true},
		{[]byte{0x91}, 24, true}, // invalid: charged as the largest standard window
	} {
		if got, ok := brotliWindowBits(tt.hdr); got != tt.bits || ok != tt.ok {
			t.Errorf("brotliWindowBits(%x) = %d, %v, want %d, %v", tt.hdr, got, ok, tt.bits, tt.ok)
		}
	}
}

// TestDecoderStateCharges measures what each decoder allocates besides its
// window and checks the constants charged for it cover that. The brotli
// Huffman tables a meta-block header may ask for are computed from the
// decoder's table sizes (4-byte entries, 256 trees each of the literal
// (630 entries), command (1080) and distance (920; 1528 with large windows)
// alphabets), since no short stream reaches them all.
func TestDecoderStateCharges(t *testing.T) {
	data := text(256 << 10)
	measure := func(name string, f func()) uint64 {
		f() // warm up package-level state
		return allocated(f)
	}
	gz := encode(t, "gzip", data)
	gzipCost := measure("gzip", func() {
		zr, _ := gzip.NewReader(bytes.NewReader(gz))
		io.Copy(io.Discard, zr)
	})
	zl := encode(t, "deflate", data)
	zlibCost := measure("deflate", func() {
		zr, _ := zlib.NewReader(bytes.NewReader(zl))
		io.Copy(io.Discard, zr)
	})
	const zstdWindow = 1 << 20
	var zbuf bytes.Buffer
	zw, _ := zstd.NewWriter(&zbuf, zstd.WithWindowSize(zstdWindow))
	zw.Write(text(2 << 20))
	zw.Close()
	zstdCost := measure("zstd", func() {
		zr, _ := zstd.NewReader(bytes.NewReader(zbuf.Bytes()), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		io.Copy(io.Discard, zr)
		zr.Close()
	})
	br := encode(t, "br", data)
	brCost := measure("br", func() {
		io.Copy(io.Discard, brotli.NewReader(bytes.NewReader(br)))
	})
	const tables = 4 * 256 * (630 + 1080 + 1528)
	brWindow := uint64(1) << 22 // andybalholm's encoder: lgwin 22
	t.Logf("allocated (bytes): gzip %d, deflate %d, zstd %d (1 MiB window), br %d (4 MiB window); br worst-case tables %d",
		gzipCost, zlibCost, zstdCost, brCost, tables)
	for _, tt := range []struct {
		name   string
		got    uint64
		charge int64
	}{
		{"gzip", gzipCost, FlateState},
		{"deflate", zlibCost, FlateState},
		{"zstd", zstdCost - zstdWindow, ZstdState},
		{"br", brCost, int64(brWindow) + BrotliState - tables},
	} {
		if tt.got > uint64(tt.charge) {
			t.Errorf("%s decoder allocates %d bytes besides its window, more than the %d charged", tt.name, tt.got, tt.charge)
		}
	}
}

// TestInFlightBrotliStall: a brotli stream declaring a 16 MiB window is
// charged before the decoder allocates, so against an 8 MiB budget it is
// refused having allocated almost nothing, where the decoder alone
// allocates 16 MiB on its fourth byte. Sabotage: not charging in
// brotliCodec (charge returning nil) lets the Reader allocate 16 MiB.
func TestInFlightBrotliStall(t *testing.T) {
	stall := brotliStall()
	raw := allocated(func() {
		io.Copy(io.Discard, brotli.NewReader(bytes.NewReader(stall)))
	})
	f := limits.NewInFlight(8 << 20)
	var err error
	got := allocated(func() {
		_, err = ReadAll(bytes.NewReader(stall), "br", limits.Budget{}, WithInFlight(f))
	})
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageInFlight || e.Observed <= e.Limit || !e.Declared || e.Encoding != "br" {
		t.Fatalf("ReadAll(br stall) = %v, want a declared inflight error that could never fit", err)
	}
	if raw < 16<<20 || got > 1<<20 {
		t.Fatalf("allocated %d bytes (decoder alone: %d), want under 1 MiB (and the decoder over 16 MiB)", got, raw)
	}
	if f.InUse() != 0 || f.Peak() != 0 {
		t.Fatalf("InUse() = %d, Peak() = %d, want 0, 0", f.InUse(), f.Peak())
	}
}

// TestInFlightReleased: after every kind of body, good or not, whole or
// streamed, the budget is back to 0, and Peak stays within Cap. Sabotage:
// not releasing the List's hold in chunk.List.Release leaves the chunks
// charged.
func TestInFlightReleased(t *testing.T) {
	t.Parallel()
	data := text(200 << 10)
	f := limits.NewInFlight(64 << 20)
	b := limits.Budget{MaxDecodedBytes: 1 << 20}
	for _, c := range []string{"identity", "gzip", "deflate", "br", "zstd", "gzip, br"} {
		body := layered(t, data, splitCodings(c)...)
		for _, tt := range []struct {
			name string
			body []byte
			b    limits.Budget
		}{
			{"good", body, b},
			{"truncated", body[:len(body)/2], b},
			{"over", body, limits.Budget{MaxDecodedBytes: 100 << 10}},
		} {
			got, err := ReadAll(bytes.NewReader(tt.body), c, tt.b, WithInFlight(f))
			if tt.name == "good" && (err != nil || !bytes.Equal(got, data)) {
				t.Errorf("%s %s: ReadAll = %d bytes, %v", c, tt.name, len(got), err)
			}
			if f.InUse() != 0 {
				t.Fatalf("%s %s: InUse() = %d after ReadAll, want 0", c, tt.name, f.InUse())
			}
			d, _ := NewReader(bytes.NewReader(tt.body), c, tt.b, WithInFlight(f))
			chunks, err := d.ReadAllChunks()
			// A prefix of an identity body is an identity body: only a
			// coding can tell that it was cut.
			if ok := tt.name == "good" || (tt.name == "truncated" && c == "identity"); (err == nil) != ok {
				t.Errorf("%s %s: ReadAllChunks = %v", c, tt.name, err)
			}
			var held int64
			for i := range chunks.Len() {
				held += int64(len(chunks.Chunk(i)))
			}
			if f.InUse() < held {
				t.Errorf("%s %s: InUse() = %d while %d bytes of chunks are held, want at least that", c, tt.name, f.InUse(), held)
			}
			chunks.Release()
			d.Close()
			if f.InUse() != 0 {
				t.Fatalf("%s %s: InUse() = %d after Close, want 0", c, tt.name, f.InUse())
			}
			d, _ = NewReader(bytes.NewReader(tt.body), c, tt.b, WithInFlight(f))
			io.CopyN(io.Discard, d, 1000)
			d.Close()
			if f.InUse() != 0 {
				t.Fatalf("%s %s: InUse() = %d after a streamed Close, want 0", c, tt.name, f.InUse())
			}
		}
	}
	if f.Peak() > f.Cap() || f.Peak() == 0 {
		t.Errorf("Peak() = %d, want within (0, %d]", f.Peak(), f.Cap())
	}
}

// TestInFlightWholeBody: a whole body is charged its size, so a body
// larger than the budget is never handed out whole, and a busy budget
// refuses a body that would fit alone.
func TestInFlightWholeBody(t *testing.T) {
	t.Parallel()
	data := text(1 << 20)
	small := limits.NewInFlight(512 << 10)
	_, err := ReadAll(bytes.NewReader(data), "", limits.Budget{}, WithInFlight(small))
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageInFlight || small.Peak() > small.Cap() {
		t.Fatalf("ReadAll(1 MiB, 512 KiB in flight) = %v, peak %d, want inflight", err, small.Peak())
	}
	f := limits.NewInFlight(2 << 20)
	h := inflight.NewHold(inflight.Of(f))
	h.Grow(1 << 20)
	_, err = ReadAll(bytes.NewReader(encode(t, "gzip", data)), "gzip", limits.Budget{}, WithInFlight(f))
	if !errors.Is(err, limits.ErrBusy) || !errors.As(err, &e) || e.Observed > e.Limit {
		t.Fatalf("ReadAll with the budget half held = %v, want busy", err)
	}
	h.Release()
	got, err := ReadAll(bytes.NewReader(encode(t, "gzip", data)), "gzip", limits.Budget{MaxDecodedBytes: 1 << 20}, WithInFlight(f))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("ReadAll with room = %v", err)
	}
	if f.InUse() != 0 || small.InUse() != 0 {
		t.Fatalf("InUse() = %d, %d, want 0", f.InUse(), small.InUse())
	}
}

// TestInFlightBrotliRingBufferGrowth: the brotli decoder does not allocate
// its ring buffer at the declared window at once: it starts small and
// doubles it as meta-blocks need more (andybalholm/brotli
// calculateRingBufferSize, "canny" allocation), copying the old ring buffer
// into the new one (ensureRingBuffer). While the last copy runs, the
// buffers of window/2 and window are both live: 1.5 times the window, where
// the body was charged the window once. With a 16 MiB window that is 8 MiB
// no body was charged, more than BrotliState's slack over its worst-case
// Huffman tables.
//
// The test measures that the chain happens (with the collector off, the
// decoder allocates at least 1.5 times the window for a body that fills
// it, where a single allocation would be the window plus tables) and
// checks that the charge covers both buffers of the last step, plus the
// worst-case tables of TestDecoderStateCharges.
func TestInFlightBrotliRingBufferGrowth(t *testing.T) {
	const lgwin = 22
	const window = 1 << lgwin
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 1, LGWin: lgwin})
	w.Write(text(window))
	w.Close()
	body := buf.Bytes()
	if bits, ok := brotliWindowBits(body); !ok || bits != lgwin {
		t.Fatalf("stream declares window bits %d, %v, want %d", bits, ok, lgwin)
	}
	got := allocated(func() {
		n, err := io.Copy(io.Discard, brotli.NewReader(bytes.NewReader(body)))
		if err != nil || n != window {
			t.Errorf("decoded %d bytes, %v", n, err)
		}
	})
	t.Logf("decoder allocated %d bytes for a %d-byte window", got, window)
	if got < window+window/2 {
		t.Fatalf("decoder allocated %d bytes, want at least 1.5 times the %d-byte window (the ring buffer grows in steps)", got, window)
	}
	const tables = 4 * 256 * (630 + 1080 + 1528)
	const slack = 42 // kRingBufferWriteAheadSlack, per ring buffer
	for bits := uint(10); bits <= 30; bits++ {
		ring := int64(1) << bits
		if need := ring + ring/2 + 2*slack + tables; brotliCharge(bits) < need {
			t.Errorf("brotliCharge(%d) = %d, want at least %d: both ring buffers of the last growth step (%d and %d bytes) and the tables", bits, brotliCharge(bits), need, ring/2, ring)
		}
	}
}

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
