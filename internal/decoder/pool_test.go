package decoder

import (
	"bytes"
	"hash/adler32"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

// Attacks that hold, pinned so that a change of decoder or pool cannot
// quietly open them.

// TestZstdPooledHistoryNotReachable: a frame whose matches reach back into
// a dictionary it never ships (Dictionary_ID 0, so no "unknown dictionary"
// verdict) fails on a pooled decoder that has just decoded exactly that
// dictionary as the previous body. The previous body's history must not
// stand in for the missing dictionary, even though the content checksum
// would then verify.
func TestZstdPooledHistoryNotReachable(t *testing.T) {
	t.Parallel()
	secret := text(5000)
	prev := encode(t, "zstd", secret)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(0, secret), zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	ref := enc.EncodeAll(secret, nil)
	if len(ref) > 100 {
		t.Fatalf("dictionary-encoded frame is %d bytes: it does not reference the dictionary", len(ref))
	}
	for range 3 {
		if _, err := decodeAll(t, prev, "zstd", limits.Budget{}); err != nil {
			t.Fatal(err)
		}
		if got, err := decodeAll(t, ref, "zstd", limits.Budget{}); stageOf(err) != "integrity" {
			t.Fatalf("ReadAll(frame referencing the previous body's history) = %d bytes, %v; want stage integrity", len(got), err)
		}
	}
	withID, _ := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(77, secret), zstd.WithEncoderCRC(true))
	if _, err := decodeAll(t, withID.EncodeAll(secret, nil), "zstd", limits.Budget{}); stageOf(err) != "integrity" {
		t.Errorf("ReadAll(zstd frame with unknown Dictionary_ID) = %v, want stage integrity", err)
	}
}

// TestZstdContentSizeMismatch: a frame whose content differs from its
// declared Frame_Content_Size is malformed, in both directions.
func TestZstdContentSizeMismatch(t *testing.T) {
	t.Parallel()
	frame := func(fcs byte, content string) []byte {
		// Single segment, 1-byte Frame_Content_Size, one last raw block.
		b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, fcs}
		h := uint32(len(content))<<3 | 1
		return append(append(b, byte(h), byte(h>>8), byte(h>>16)), content...)
	}
	for _, tt := range []struct {
		fcs   byte
		stage string
	}{{10, ""}, {5, "integrity"}, {20, "integrity"}} {
		if _, err := decodeAll(t, frame(tt.fcs, "0123456789"), "zstd", limits.Budget{}); stageOf(err) != tt.stage {
			t.Errorf("ReadAll(zstd declaring %d bytes, holding 10) = %v, want stage %q", tt.fcs, err, tt.stage)
		}
	}
}

// TestZlibPresetDictionary: a zlib stream that needs a preset dictionary
// (FDICT) is rejected, since HTTP has no way to supply one. The one DICTID
// that passes is 1, the Adler-32 of the empty dictionary, which decodes
// exactly as no dictionary does.
func TestZlibPresetDictionary(t *testing.T) {
	t.Parallel()
	stream := func(dictID uint32) []byte {
		b := []byte{0x78, 0}
		for b[1] = 0x20; (0x78<<8|int(b[1]))%31 != 0; b[1]++ {
		}
		b = append(b, byte(dictID>>24), byte(dictID>>16), byte(dictID>>8), byte(dictID))
		b = append(b, 0x03, 0x00) // an empty final fixed-Huffman block
		a := adler32.Checksum(nil)
		return append(b, byte(a>>24), byte(a>>16), byte(a>>8), byte(a))
	}
	if _, err := decodeAll(t, stream(adler32.Checksum([]byte("dictionary"))), "deflate", limits.Budget{}); stageOf(err) != "integrity" {
		t.Errorf("ReadAll(zlib with FDICT) = %v, want stage integrity", err)
	}
	if got, err := decodeAll(t, stream(1), "deflate", limits.Budget{}); err != nil || len(got) != 0 {
		t.Errorf("ReadAll(zlib with the empty preset dictionary) = %q, %v; want empty, nil", got, err)
	}
}

// brotliMetaBlockHeader is a brotli stream header (standard WBITS 16..24)
// followed by the header of a non-last uncompressed meta-block declaring
// 16 MiB, then pad bytes of its content.
func brotliMetaBlockHeader(wbits uint, pad int) []byte {
	var acc uint64
	var nbits uint
	put := func(v uint64, n uint) { acc |= v << nbits; nbits += n }
	if wbits == 16 {
		put(0, 1)
	} else {
		put(1, 1)
		put(uint64(wbits-17), 3)
	}
	put(0, 1)        // ISLAST = 0
	put(2, 2)        // MNIBBLES = 6
	put(1<<24-1, 24) // MLEN-1
	put(1, 1)        // ISUNCOMPRESSED
	var b []byte
	for ; nbits > 0; nbits -= min(nbits, 8) {
		b = append(b, byte(acc))
		acc >>= 8
	}
	return append(b, bytes.Repeat([]byte("z"), pad)...)
}

// TestBrotliRingBufferBoundedByWindow pins what brotli's decoder memory is
// bounded by: the ring buffer is sized by the meta-block length the stream
// declares, capped by the declared window, not by MaxDecodedBytes or by
// the output. A 16 MiB meta-block costs the whole window under WBITS 24
// (the 16 MiB package doc admits for standard streams) and only 64 KiB
// under WBITS 16.
func TestBrotliRingBufferBoundedByWindow(t *testing.T) {
	for _, tt := range []struct {
		wbits uint
		max   uint64
	}{{16, 1 << 20}, {24, 18 << 20}} {
		body := brotliMetaBlockHeader(tt.wbits, 2000)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := decodeAll(t, body, "br", limits.Budget{MaxDecodedBytes: 1000})
		runtime.ReadMemStats(&after)
		if stageOf(err) != "decoded" {
			t.Errorf("ReadAll(br WBITS %d, 16 MiB meta-block, limit 1000) = %v, want stage decoded", tt.wbits, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > tt.max {
			t.Errorf("br WBITS %d, 16 MiB meta-block: %d bytes allocated, want at most %d", tt.wbits, got, tt.max)
		}
	}
}

// backRefFirst is a raw DEFLATE stream whose first symbol copies 3 bytes
// from distance 1: before any output, so only a previous body's window
// could satisfy it.
func backRefFirst() []byte {
	var acc uint32
	var nbits uint
	put := func(v uint32, n uint) { acc |= v << nbits; nbits += n }
	huff := func(code uint32, n uint) { // Huffman codes go most significant bit first
		for i := n; i > 0; i-- {
			put(code>>(i-1)&1, 1)
		}
	}
	put(1, 1)          // BFINAL
	put(1, 2)          // fixed Huffman
	huff(0b0000001, 7) // length symbol 257: 3 bytes
	huff(0, 5)         // distance code 0: distance 1
	huff(0, 7)         // end of block
	var b []byte
	for ; nbits > 0; nbits -= min(nbits, 8) {
		b = append(b, byte(acc))
		acc >>= 8
	}
	return b
}

// TestFlatePooledWindowNotReachable: a gzip or zlib stream that starts
// with a back-reference fails on pooled decoders that have just decoded
// another body: the previous body's window is not reachable.
func TestFlatePooledWindowNotReachable(t *testing.T) {
	t.Parallel()
	raw := backRefFirst()
	gz := append([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, raw...)
	gz = append(gz, 0, 0, 0, 0, 3, 0, 0, 0) // CRC (wrong either way), ISIZE 3
	zl := append([]byte{0x78, 0x01}, raw...)
	zl = append(zl, 0, 0, 0, 0)
	for _, tt := range []struct {
		coding string
		body   []byte
	}{{"gzip", gz}, {"deflate", zl}} {
		prev := encode(t, tt.coding, text(50000))
		for range 3 {
			if _, err := decodeAll(t, prev, tt.coding, limits.Budget{}); err != nil {
				t.Fatal(err)
			}
			if got, err := decodeAll(t, tt.body, tt.coding, limits.Budget{}); stageOf(err) != "integrity" {
				t.Fatalf("ReadAll(%s starting with a back-reference) = %q, %v; want stage integrity", tt.coding, got, err)
			}
		}
	}
}

// TestPoolNoStateLeak interleaves valid and hostile bodies through the
// pooled decoders, abandoning hostile ones mid-stream, and checks that every
// valid body still decodes exactly.
func TestPoolNoStateLeak(t *testing.T) {
	t.Parallel()
	b := limits.Budget{MaxDecodedBytes: 200000}
	type body struct {
		coding string
		data   []byte
		enc    []byte
	}
	var valid, hostile []body
	for i, c := range compressed {
		d := text(10000 + 3000*i)
		valid = append(valid, body{c, d, encode(t, c, d)})
		good := encode(t, c, text(150000))
		hostile = append(hostile,
			body{c, nil, encode(t, c, bytes.Repeat([]byte("h"), 1<<20))},  // bomb
			body{c, nil, good[:len(good)/2]},                              // truncated
			body{c, nil, append(append([]byte(nil), good...), "junk"...)}, // trailing
		)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 20 {
				h := hostile[(round+g)%len(hostile)]
				d, _ := NewReader(bytes.NewReader(h.enc), h.coding, b)
				if round%2 == 0 {
					d.Read(make([]byte, 1000)) // abandon mid-stream
				} else {
					readInPieces(d, 4096)
				}
				d.Close()
				v := valid[(round*3+g)%len(valid)]
				got, err := ReadAll(bytes.NewReader(v.enc), v.coding, b)
				if err != nil || !bytes.Equal(got, v.data) {
					t.Errorf("valid %s body after hostile %s: %d bytes, %v; want %d bytes", v.coding, h.coding, len(got), err, len(v.data))
				}
			}
		})
	}
	wg.Wait()
}
