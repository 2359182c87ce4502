package decoder

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

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

// TestRequireChecksumRejectsUnverifiableCodings pins issue 8 item 15:
// brotli has no checksum and zstd frames may omit theirs, so bit flips in
// them decode to different content and are accepted. That stays the
// default (documented in the package doc); WithRequireChecksum rejects such
// bodies with stage integrity, and accepts the checksummed codings.
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
