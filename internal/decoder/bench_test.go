package decoder

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

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

// A netBody is an in-memory body read as an HTTP body is read: through
// Read alone. net/http's request and response bodies, http.MaxBytesReader and
// io.LimitReader are no io.ByteReader, so a raw gzip or zlib reader wraps
// them in a bufio.Reader, as the bounded Reader does with its wire counter.
// Handed a *bytes.Reader itself, flate would run the input loop it keeps for
// in-memory sources only, one that no HTTP body (bounded or not) ever gets.
type netBody struct{ io.Reader }

// BenchmarkDecode compares the bounded Reader with the raw decoder on the
// same input, an HTTP body (see [netBody]); MB/s are of decoded output.
// Compare the ratio of the two sub-benchmarks of each coding, or run
// [BenchmarkDecodePaired] for a ratio measured in one loop.
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
				drain(b, reset(netBody{src}), buf)
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
				decodeBounded(b, netBody{src}, c, budget, buf)
			}
			stop()
		})
	}
}

// decodeBounded reads src through a bounded Reader to the end.
func decodeBounded(b *testing.B, src io.Reader, coding string, budget limits.Budget, buf []byte) {
	d, err := NewReader(src, coding, budget)
	if err != nil {
		b.Fatal(err)
	}
	drain(b, d, buf)
	d.Close()
}

// BenchmarkDecodePaired is the paired form of BenchmarkDecode: each
// iteration decodes the body with the raw decoder and with the bounded
// Reader, in an order that flips every iteration, so that the load of a
// shared machine falls on both instead of on whichever sub-benchmark ran at
// the time. Metrics: ns/op-raw and ns/op-bounded, the mean wall time of one
// decode with each, and speed, the median over iterations of the raw
// decoder's time over the bounded Reader's (above 1: the bounded Reader is
// faster). ns/op, B/op and allocs/op count both decodes of an iteration.
func BenchmarkDecodePaired(b *testing.B) {
	for _, c := range codings {
		body := encode(b, c, benchBody)
		budget := limits.Budget{MaxDecodedBytes: int64(len(benchBody)), MaxWireBytes: int64(len(body))}
		buf := make([]byte, 32<<10)
		b.Run("coding="+c, func(b *testing.B) {
			reset := rawReader(b, c)
			src := bytes.NewReader(body)
			raw := func() time.Duration {
				start := time.Now()
				src.Reset(body)
				drain(b, reset(netBody{src}), buf)
				return time.Since(start)
			}
			bounded := func() time.Duration {
				start := time.Now()
				src.Reset(body)
				decodeBounded(b, netBody{src}, c, budget, buf)
				return time.Since(start)
			}
			var tRaw, tBounded time.Duration
			var ratios []float64
			b.ReportAllocs()
			for b.Loop() {
				var r, d time.Duration
				if len(ratios)%2 == 0 {
					r = raw()
					d = bounded()
				} else {
					d = bounded()
					r = raw()
				}
				tRaw += r
				tBounded += d
				ratios = append(ratios, float64(r)/float64(max(d, 1)))
			}
			slices.Sort(ratios)
			n := float64(len(ratios))
			b.ReportMetric(float64(tRaw.Nanoseconds())/n, "ns/op-raw")
			b.ReportMetric(float64(tBounded.Nanoseconds())/n, "ns/op-bounded")
			b.ReportMetric(ratios[len(ratios)/2], "speed")
		})
	}
}

// zeroBomb returns size zero bytes encoded with coding at the encoder's
// fastest level (a 1 GiB bomb takes under a second to make), written in
// 1 MiB pieces so that making it never holds the decoded bytes.
func zeroBomb(tb testing.TB, coding string, size int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch coding {
	case "gzip":
		w, err = gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	case "zstd":
		w, err = zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	default:
		err = fmt.Errorf("no bomb of %s", coding)
	}
	if err != nil {
		tb.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range size >> 20 {
		w.Write(zeros)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkBombRejection rejects bombs that decode to 16 MiB and to 1 GiB
// with a 1 MiB decoded limit. The cost of a rejection depends on the limit,
// not on what the bomb would expand to: compare the two sizes of each
// coding (bench/run reports the ratio, which must stay under 1.5).
func BenchmarkBombRejection(b *testing.B) {
	budget := limits.Budget{MaxDecodedBytes: 1 << 20, MaxWireBytes: 64 << 20}
	for _, c := range []string{"gzip", "zstd"} {
		for _, size := range []int{16 << 20, 1 << 30} {
			b.Run(fmt.Sprintf("coding=%s/size=%dMiB", c, size>>20), func(b *testing.B) {
				bomb := zeroBomb(b, c, size)
				b.ReportAllocs()
				stop := cpuPerOp(b)
				for b.Loop() {
					_, err := ReadAll(bytes.NewReader(bomb), c, budget)
					if stageOf(err) != "decoded" {
						b.Fatalf("ReadAll(%s bomb of %d bytes) = %v, want stage decoded", c, size, err)
					}
				}
				stop()
				b.ReportMetric(float64(len(bomb)), "bomb-bytes")
			})
		}
	}
}
