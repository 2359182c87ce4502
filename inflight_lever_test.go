package boundhttp_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestLeverPerCodecAtTheServer states what a client holds of the server's
// in-flight budget per byte it sent, codec by codec, with the start of the
// worst stream for each and then a stall: nothing before its first body
// byte, and after it at most the codec's decoder state plus the body's
// bound (what remains of MaxDecodedBytes, 4 MiB, and a chunk): the first
// reservation of a body read whole. The numbers are logged for each step.
// Run on 438f943 (a reservation at the first Read, before the first byte)
// it fails the headers-only step: 4,325,376 held by gzip and deflate
// headers, 65,536 by an identity request declaring 64 KiB.
func TestLeverPerCodecAtTheServer(t *testing.T) {
	t.Parallel()
	const bound = 4<<20 + 128<<10 // MaxDecodedBytes and up to two chunks
	for _, tc := range []struct {
		coding string
		head   string // request headers beyond the method line
		start  []byte // the first bytes of the worst stream
		state  int64  // the codec's decoder state (decoding.WithInFlight)
	}{
		{"identity", "Content-Length: 65536\r\n", []byte("x"), 0},
		{"identity chunked", "Transfer-Encoding: chunked\r\n", []byte("1\r\nx\r\n"), 0},
		{"gzip", "Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", chunked(testenc.Encode("gzip", []byte("x"))[:10]), 64 << 10},
		{"deflate", "Content-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n", chunked([]byte{0x78, 0x9c}), 64 << 10},
		{"br 16 MiB window", "Content-Encoding: br\r\nTransfer-Encoding: chunked\r\n", chunked(brotliStall()), 16<<20 + 8<<20 + 3<<20 + 512<<10},
		{"zstd 8 MiB window", "Content-Encoding: zstd\r\nTransfer-Encoding: chunked\r\n", chunked(zstdHeader8MiB()), 8<<20 + 640<<10},
	} {
		t.Run(tc.coding, func(t *testing.T) {
			f := limits.NewInFlight(1 << 30)
			entered := make(chan struct{}, 1)
			mw := mustMW(t, boundhttp.MiddlewareConfig{InFlight: f, Budget: limits.Budget{MaxWindowBytes: 16 << 20}})
			inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(s.Close)
			c, err := net.Dial("tcp", s.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			head := "POST / HTTP/1.1\r\nHost: x\r\n" + tc.head + "\r\n"
			io.WriteString(c, head)
			<-entered
			time.Sleep(50 * time.Millisecond) // the Middleware would reserve now, if it reserved at headers
			before := f.InUse()
			if before != 0 {
				t.Errorf("%d bytes of headers alone hold %d, want 0", len(head), before)
			}
			c.Write(tc.start)
			deadline := time.Now().Add(30 * time.Second)
			for f.InUse() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			held := f.InUse()
			if held == 0 {
				t.Fatalf("the first %d body bytes hold nothing after 30 s: the bound below proves nothing", len(tc.start))
			}
			if most := tc.state + bound; held > most {
				t.Errorf("the first %d body bytes hold %d, more than the decoder state and the body's bound (%d)", len(tc.start), held, most)
			}
			t.Logf("%s: headers alone hold %d; the first %d bytes on the wire hold %d (%.0f KiB per byte)",
				tc.coding, before, len(tc.start), held, float64(held)/1024/float64(len(tc.start)))
		})
	}
}

// chunked frames b as one chunk of a chunked body, not the last.
func chunked(b []byte) []byte {
	return append(fmt.Appendf(nil, "%x\r\n", len(b)), append(b, "\r\n"...)...)
}

// zstdHeader8MiB is the start of a zstd frame declaring an 8 MiB window:
// the magic number and a frame header descriptor with a window descriptor
// (exponent 13: 8 MiB), then nothing.
func zstdHeader8MiB() []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3}
}
