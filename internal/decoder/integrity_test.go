package decoder

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

func TestTruncated(t *testing.T) {
	t.Parallel()
	data := text(100000)
	for _, c := range compressed {
		body := encode(t, c, data)
		for _, cut := range []int{1, 2, 4, 8, len(body) / 2, len(body) - 1} {
			_, err := decodeAll(t, body[:len(body)-cut], c, limits.Budget{})
			if stageOf(err) != "integrity" {
				t.Errorf("ReadAll(%s without its last %d bytes) = %v, want stage integrity", c, cut, err)
			}
		}
	}
	// A connection that ends before its declared length.
	for _, c := range codings {
		src := io.MultiReader(bytes.NewReader(encode(t, c, data)[:100]), errReader{io.ErrUnexpectedEOF})
		if _, err := ReadAll(src, c, limits.Budget{}); stageOf(err) != "integrity" {
			t.Errorf("ReadAll(%s, source fails with ErrUnexpectedEOF) = %v, want stage integrity", c, err)
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestSourceErrorPassesThrough: a network error is not a verdict on the body.
func TestSourceErrorPassesThrough(t *testing.T) {
	t.Parallel()
	boom := io.ErrClosedPipe
	for _, c := range codings {
		src := io.MultiReader(bytes.NewReader(encode(t, c, text(50000))[:100]), errReader{boom})
		if _, err := ReadAll(src, c, limits.Budget{}); err != boom {
			t.Errorf("ReadAll(%s, source fails) = %v, want %v", c, err, boom)
		}
	}
}

func TestChecksumCorruption(t *testing.T) {
	t.Parallel()
	data := text(50000)
	// Offsets from the end of the body into each format's checksum.
	for c, off := range map[string]int{"gzip": 8, "deflate": 1, "zstd": 1} {
		body := encode(t, c, data)
		body[len(body)-off] ^= 0x01
		if _, err := decodeAll(t, body, c, limits.Budget{}); stageOf(err) != "integrity" {
			t.Errorf("ReadAll(%s with a flipped checksum bit) = %v, want stage integrity", c, err)
		}
	}
	// gzip also checks the length (ISIZE).
	body := encode(t, "gzip", data)
	body[len(body)-4] ^= 0x01
	if _, err := decodeAll(t, body, "gzip", limits.Budget{}); stageOf(err) != "integrity" {
		t.Errorf("ReadAll(gzip with a wrong ISIZE) = %v, want stage integrity", err)
	}
	// brotli has no checksum; a corrupt stream header must still fail.
	body = encode(t, "br", data)
	body[0] = 0xff
	if _, err := decodeAll(t, body, "br", limits.Budget{}); stageOf(err) != "integrity" {
		t.Errorf("ReadAll(br with a corrupt header) = %v, want stage integrity", err)
	}
}

func TestWrongFormat(t *testing.T) {
	t.Parallel()
	data := text(10000)
	for _, claimed := range compressed {
		for _, actual := range codings {
			if actual == claimed {
				continue
			}
			if _, err := decodeAll(t, encode(t, actual, data), claimed, limits.Budget{}); stageOf(err) != "integrity" {
				t.Errorf("ReadAll(%s body labelled %s) = %v, want stage integrity", actual, claimed, err)
			}
		}
	}
}

// TestRawDeflateRejected pins the documented decision: HTTP "deflate" is
// the zlib format, and raw DEFLATE is not accepted as a fallback.
func TestRawDeflateRejected(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(text(10000))
	w.Close()
	if _, err := decodeAll(t, buf.Bytes(), "deflate", limits.Budget{}); stageOf(err) != "integrity" {
		t.Errorf("ReadAll(raw DEFLATE labelled deflate) = %v, want stage integrity", err)
	}
}

func TestTrailingGarbage(t *testing.T) {
	t.Parallel()
	data := text(20000)
	for _, c := range compressed {
		for _, junk := range []string{"\x00", "x", "garbage after the end", "\n"} {
			body := append(encode(t, c, data), junk...)
			_, err := decodeAll(t, body, c, limits.Budget{})
			if stageOf(err) != "integrity" {
				t.Errorf("ReadAll(%s + %q) = %v, want stage integrity", c, junk, err)
			}
			if (c == "gzip" || c == "deflate") && !errors.Is(err, errTrailingBytes) {
				t.Errorf("ReadAll(%s + %q) = %v, want %v", c, junk, err, errTrailingBytes)
			}
		}
	}
}

// TestConcatenatedMembers: a second gzip member or zstd frame is rejected by
// default; with WithMaxMembers all of them are charged to one total.
func TestConcatenatedMembers(t *testing.T) {
	t.Parallel()
	part := text(30000)
	for _, c := range compressed {
		one := encode(t, c, part)
		two := append(append([]byte(nil), one...), one...)
		_, err := decodeAll(t, two, c, limits.Budget{})
		if stageOf(err) != "integrity" {
			t.Errorf("ReadAll(two %s members, default) = %v, want stage integrity", c, err)
		}
		if c == "gzip" && !errors.Is(err, errExtraMember) {
			t.Errorf("ReadAll(two gzip members, default) = %v, want %v", err, errExtraMember)
		}
		if c == "zstd" && !errors.Is(err, errExtraFrame) {
			t.Errorf("ReadAll(two zstd frames, default) = %v, want %v", err, errExtraFrame)
		}
		if c == "deflate" || c == "br" {
			continue // formats without members
		}
		whole := append(append([]byte(nil), part...), part...)
		got, err := decodeAll(t, two, c, limits.Budget{}, WithMaxMembers(2))
		if err != nil || !bytes.Equal(got, whole) {
			t.Errorf("ReadAll(two %s members, WithMaxMembers(2)) = %d bytes, %v; want %d bytes", c, len(got), err, len(whole))
		}
		// Each member fits the limit; the total does not.
		limit := int64(len(part) + len(part)/2)
		if _, err := decodeAll(t, two, c, limits.Budget{MaxDecodedBytes: limit}, WithMaxMembers(2)); stageOf(err) != "decoded" {
			t.Errorf("ReadAll(two %s members of %d, limit %d) = %v, want stage decoded", c, len(part), limit, err)
		}
		three := append(append([]byte(nil), two...), one...)
		if _, err := decodeAll(t, three, c, limits.Budget{}, WithMaxMembers(2)); stageOf(err) != "integrity" {
			t.Errorf("ReadAll(three %s members, WithMaxMembers(2)) = %v, want stage integrity", c, err)
		}
	}
}

// TestEmptyMembersCapped: empty members produce nothing and cost CPU, so
// their number is capped too.
func TestEmptyMembersCapped(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"gzip", "zstd"} {
		empty := encode(t, c, nil)
		body := bytes.Repeat(empty, 1000)
		if _, err := decodeAll(t, body, c, limits.Budget{}, WithMaxMembers(100)); stageOf(err) != "integrity" {
			t.Errorf("ReadAll(1000 empty %s members, cap 100) = %v, want stage integrity", c, err)
		}
		if _, err := decodeAll(t, body, c, limits.Budget{}, WithMaxMembers(1000)); err != nil {
			t.Errorf("ReadAll(1000 empty %s members, cap 1000) = %v, want nil", c, err)
		}
	}
}

// zstdNoChecksum encodes data as one zstd frame without a content checksum.
func zstdNoChecksum(t testing.TB, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// flipsAccepted counts the single-bit flips of body (one per byte, bounded)
// that decode cleanly to bytes other than want.
func flipsAccepted(t testing.TB, body []byte, ce string, want []byte, opts ...Option) (accepted, tried int) {
	t.Helper()
	for i := 0; i < len(body) && tried < 400; i++ {
		flipped := append([]byte(nil), body...)
		flipped[i] ^= 1 << (i % 8)
		tried++
		got, err := ReadAll(bytes.NewReader(flipped), ce, limits.Budget{}, opts...)
		if err == nil && !bytes.Equal(got, want) {
			accepted++
		}
	}
	return accepted, tried
}

// TestRequireChecksumRejectsUnverifiableCodings pins the trap "a coding
// without a checksum accepted as verified": brotli has no checksum and zstd
// frames may omit theirs, so bit flips in them decode to different content
// and are accepted. That stays the default (documented in the package doc);
// WithRequireChecksum rejects such bodies with stage integrity, and accepts
// the checksummed codings.
func TestRequireChecksumRejectsUnverifiableCodings(t *testing.T) {
	t.Parallel()
	data := text(4 << 10)
	bodies := map[string][]byte{
		"gzip":              encode(t, "gzip", data),
		"deflate":           encode(t, "deflate", data),
		"zstd":              encode(t, "zstd", data),
		"zstd-no-checksum":  zstdNoChecksum(t, data),
		"br":                encode(t, "br", data),
		"identity":          data,
		"gzip, br":          layered(t, data, "gzip", "br"),
		"br, gzip":          layered(t, data, "br", "gzip"),
		"gzip, zstd":        layered(t, data, "gzip", "zstd"),
		"deflate, identity": encode(t, "deflate", data),
	}
	ceOf := map[string]string{"zstd-no-checksum": "zstd", "identity": ""}
	verified := map[string]bool{"gzip": true, "deflate": true, "zstd": true, "gzip, zstd": true, "deflate, identity": true}
	for name, body := range bodies {
		ce, ok := ceOf[name]
		if !ok {
			ce = name
		}
		got, err := decodeAll(t, body, ce, limits.Budget{})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s without the option: ReadAll = %v, want the body", name, err)
		}
		got, err = decodeAll(t, body, ce, limits.Budget{}, WithRequireChecksum())
		switch {
		case verified[name] && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%s with WithRequireChecksum: ReadAll = %v, want the body", name, err)
		case !verified[name] && stageOf(err) != "integrity":
			t.Errorf("%s with WithRequireChecksum: ReadAll = %v, want stage integrity", name, err)
		}
		// An empty body is empty under any coding, with the option too.
		if got, err := decodeAll(t, nil, ce, limits.Budget{}, WithRequireChecksum()); err != nil || len(got) != 0 {
			t.Errorf("empty %s with WithRequireChecksum: ReadAll = %q, %v, want an empty body", name, got, err)
		}
	}

	// Bit flips: accepted with different content without the option
	// (brotli, zstd without checksum), never with it.
	for _, name := range []string{"br", "zstd-no-checksum"} {
		ce := ceOf[name]
		if ce == "" {
			ce = name
		}
		if n, tried := flipsAccepted(t, bodies[name], ce, data); n == 0 {
			t.Errorf("%s: 0 of %d bit flips accepted without the option; the documented weakness is gone, update the doc", name, tried)
		}
		if n, tried := flipsAccepted(t, bodies[name], ce, data, WithRequireChecksum()); n != 0 {
			t.Errorf("%s with WithRequireChecksum: %d of %d bit flips accepted with different content", name, n, tried)
		}
	}
	for _, name := range []string{"gzip", "deflate", "zstd"} {
		if n, tried := flipsAccepted(t, bodies[name], name, data); n != 0 {
			t.Errorf("%s: %d of %d bit flips accepted with different content", name, n, tried)
		}
	}
}
