package decoder

import (
	"bytes"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

// benchBody is JSON-like text of a few MiB, the realistic input.
var benchBody = text(4 << 20)

// drain reads r to the end with a 32 KiB buffer, as io.Copy would.
func drain(b *testing.B, r io.Reader, buf []byte) {
	for {
		_, err := r.Read(buf)
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// rawReader returns a reusable raw decoder for coding, reset to src.
func rawReader(b *testing.B, coding string) func(src io.Reader) io.Reader {
	switch coding {
	case "gzip":
		var z gzip.Reader
		return func(src io.Reader) io.Reader {
			if err := z.Reset(src); err != nil {
				b.Fatal(err)
			}
			z.Multistream(false)
			return &z
		}
	case "deflate":
		var z io.ReadCloser
		return func(src io.Reader) io.Reader {
			if z == nil {
				z, _ = zlib.NewReader(src)
			} else {
				z.(zlib.Resetter).Reset(src, nil)
			}
			return z
		}
	case "br":
		z := brotli.NewReader(nil)
		return func(src io.Reader) io.Reader { z.Reset(src); return z }
	case "zstd":
		z, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		return func(src io.Reader) io.Reader { z.Reset(src); return z }
	}
	return func(src io.Reader) io.Reader { return src }
}

// BenchmarkDecode compares the bounded Reader with the raw decoder on the
// same input; MB/s are of decoded output. Compare the ratio of the two
// sub-benchmarks of each coding.
func BenchmarkDecode(b *testing.B) {
	for _, c := range codings {
		body := encode(b, c, benchBody)
		budget := limits.Budget{MaxDecodedBytes: int64(len(benchBody)), MaxWireBytes: int64(len(body))}
		buf := make([]byte, 32<<10)
		b.Run("coding="+c+"/decoder=raw", func(b *testing.B) {
			reset := rawReader(b, c)
			src := bytes.NewReader(body)
			b.SetBytes(int64(len(benchBody)))
			b.ReportAllocs()
			stop := cpuPerOp(b)
			for b.Loop() {
				src.Reset(body)
				drain(b, reset(src), buf)
			}
			stop()
		})
		b.Run("coding="+c+"/decoder=bounded", func(b *testing.B) {
			src := bytes.NewReader(body)
			b.SetBytes(int64(len(benchBody)))
			b.ReportAllocs()
			stop := cpuPerOp(b)
			for b.Loop() {
				src.Reset(body)
				d, err := NewReader(src, c, budget)
				if err != nil {
					b.Fatal(err)
				}
				drain(b, d, buf)
				d.Close()
			}
			stop()
		})
	}
}

// TestReadAllocs: with pooled decoders, a Read in steady state allocates
// nothing.
func TestReadAllocs(t *testing.T) {
	buf := make([]byte, 4096)
	for _, c := range codings {
		data := benchBody
		if testing.Short() {
			data = data[:1<<20] // enough for the 210 reads of 4 KiB below
		}
		body := encode(t, c, data)
		for range 2 { // the second body runs on pooled decoders
			d, err := NewReader(bytes.NewReader(body), c, limits.Budget{MaxDecodedBytes: 8 << 20, MaxRatio: 1000, Timeout: 3600e9})
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				d.Read(buf)
			}
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := d.Read(buf); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s: %v allocations per Read in steady state, want 0", c, allocs)
			}
			d.Close()
		}
	}
}
