package decoding

import (
	"errors"

	"bytes"
	"github.com/boundhttp/boundhttp/limits"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// encode compresses data with coding using the encoders of the libraries
// the decoders come from.
func encode(t testing.TB, coding string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	switch coding {
	case "identity", "":
		return append([]byte(nil), data...)
	case "gzip":
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w.Write(data)
		w.Close()
	case "deflate":
		w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
		w.Write(data)
		w.Close()
	case "br":
		w := brotli.NewWriterLevel(&buf, 6)
		w.Write(data)
		w.Close()
	case "zstd":
		w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderCRC(true))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		w.Close()
	default:
		t.Fatalf("encode: unknown coding %q", coding)
	}
	return buf.Bytes()
}

// layered applies the codings of a Content-Encoding list in order.
func layered(t testing.TB, data []byte, codings ...string) []byte {
	t.Helper()
	for _, c := range codings {
		data = encode(t, c, data)
	}
	return data
}

var codings = []string{"identity", "gzip", "deflate", "br", "zstd"}

// text is a deterministic, moderately compressible body.
func text(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString(`{"id":`)
		b.WriteString(itoa(i))
		b.WriteString(`,"name":"item `)
		b.WriteString(itoa(i * 7919 % 10007))
		b.WriteString(`","tags":["alpha","beta"],"ok":true}` + "\n")
	}
	return b.Bytes()[:n]
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	return string(b[p:])
}

// stageOf returns the stage of a *limits.Error, "" for nil and "other:..."
// for any other error.
func stageOf(err error) string {
	if err == nil {
		return ""
	}
	var e *limits.Error
	if errors.As(err, &e) {
		return string(e.Stage)
	}
	return "other: " + err.Error()
}

// decodeAll runs ReadAll and checks the whole-or-nothing rule.
func decodeAll(t testing.TB, body []byte, ce string, b limits.Budget, opts ...Option) ([]byte, error) {
	t.Helper()
	got, err := ReadAll(bytes.NewReader(body), ce, b, opts...)
	if err != nil && got != nil {
		t.Fatalf("ReadAll(%s) returned %d bytes with error %v, want none", ce, len(got), err)
	}
	return got, err
}
