package decoder

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

// rawCap bounds the reference decoders so the fuzzer stays fast.
const rawCap = 1 << 20

// errRawTooLarge marks a reference decode that produced more than rawCap.
var errRawTooLarge = errors.New("reference output over cap")

// rawDecode decodes body with the unbounded decoder of coding, applying the
// same completion rules (one member or frame, no trailing bytes).
func rawDecode(coding string, body []byte) ([]byte, error) {
	src := bytes.NewReader(body)
	var r io.Reader
	switch coding {
	case "gzip":
		z, err := gzip.NewReader(src)
		if err != nil {
			return nil, err
		}
		z.Multistream(false)
		r = z
	case "deflate":
		z, err := zlib.NewReader(src)
		if err != nil {
			return nil, err
		}
		r = z
	case "br":
		// Large-window streams are accepted when their window fits the
		// budget (stage window otherwise), so the reference must read them.
		r = brotli.NewReaderOptions(src, brotli.ReaderOptions{LargeWindow: true})
	case "zstd":
		z, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(limits.DefaultMaxWindowBytes)))
		if err != nil {
			return nil, err
		}
		defer z.Close()
		r = z
	}
	out, err := io.ReadAll(io.LimitReader(r, rawCap+1))
	if err != nil {
		return nil, err
	}
	if len(out) > rawCap {
		return nil, errRawTooLarge
	}
	if (coding == "gzip" || coding == "deflate") && src.Len() != 0 {
		return nil, errTrailingBytes
	}
	return out, nil
}

// fuzzCodec checks the budget invariant (never more than the limit, only
// *limits.Error verdicts) and agreement with the reference decoder. The
// reference decoders of zstd accept any number of frames, so zstd is fuzzed
// with a generous member cap.
func fuzzCodec(f *testing.F, coding string, opts ...Option) {
	for _, d := range [][]byte{nil, []byte("a"), text(1000), bytes.Repeat([]byte("q"), 100000)} {
		enc := encode(f, coding, d)
		f.Add(enc, uint32(len(d)))
		f.Add(enc, uint32(len(d)/2))
		f.Add(append(enc, enc...), uint32(2*len(d)))
	}
	f.Fuzz(func(t *testing.T, body []byte, limit uint32) {
		limit = limit%(rawCap/2) + 1
		b := limits.Budget{MaxDecodedBytes: int64(limit), MaxWireBytes: 1 << 20}
		d, err := NewReader(bytes.NewReader(body), coding, b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := readInPieces(d, 3000)
		if len(got) > int(limit) {
			t.Fatalf("Read returned %d bytes in total, limit %d", len(got), limit)
		}
		if err == io.EOF {
			err = nil
		}
		var le *limits.Error
		if err != nil && !errors.As(err, &le) {
			t.Fatalf("error %v is not a *limits.Error", err)
		}
		whole, werr := ReadAll(bytes.NewReader(body), coding, b, opts...)
		if (werr == nil) != (err == nil) || (werr != nil && whole != nil) {
			t.Fatalf("ReadAll = %d bytes, %v; streaming ended with %v", len(whole), werr, err)
		}
		// Charged to a budget, a whole body reads ahead before it decodes
		// (see readAheadTo): same verdict, same bytes, every charge back.
		fl := limits.NewInFlight(1 << 30)
		charged, cerr := ReadAll(&pieces{r: bytes.NewReader(body), n: 700}, coding, b, append(opts, WithInFlight(fl))...)
		if (cerr == nil) != (werr == nil) || !bytes.Equal(charged, whole) || fl.InUse() != 0 {
			t.Fatalf("ReadAll charged = %d bytes, %v, %d held after; uncharged = %d bytes, %v", len(charged), cerr, fl.InUse(), len(whole), werr)
		}
		if len(body) == 0 {
			return // an empty body is empty under every coding
		}
		want, rerr := rawDecode(coding, body)
		switch {
		case err == nil && rerr != nil:
			t.Fatalf("bounded decode accepted %d bytes the reference rejects: %v", len(got), rerr)
		case err == nil && !bytes.Equal(got, want):
			t.Fatalf("bounded decode = %d bytes, reference = %d bytes, not equal", len(got), len(want))
		case err != nil && rerr == nil && len(want) <= int(limit):
			if le.Stage == limits.StageWindow {
				return // the reference does not check declared windows the same way
			}
			t.Fatalf("bounded decode rejected (%v) a valid body of %d bytes within limit %d", err, len(want), limit)
		case err != nil && rerr == nil && le.Stage != limits.StageDecoded:
			t.Fatalf("body of %d bytes over limit %d rejected at %v, want stage decoded", len(want), limit, err)
		}
	})
}

func FuzzGzip(f *testing.F)    { fuzzCodec(f, "gzip") }
func FuzzDeflate(f *testing.F) { fuzzCodec(f, "deflate") }
func FuzzBrotli(f *testing.F)  { fuzzCodec(f, "br") }
func FuzzZstd(f *testing.F)    { fuzzCodec(f, "zstd", WithMaxMembers(1<<16)) }
