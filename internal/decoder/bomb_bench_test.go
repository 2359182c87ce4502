package decoder

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

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
