package boundhttp_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// deadlineRecorder is a ResponseRecorder whose read deadline can be set,
// as a connection's can.
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error { return nil }

// TestServedBodyAllocations pins what a whole request body costs the
// Middleware beyond the handler's own work, in allocations: the exchange
// (1), which holds the request the handler gets, the body and its usage
// record. The request is not copied apart (http.MaxBytesHandler allocates
// two objects here: the copy and its reader); the chunk, the in-flight
// charge and the deadline's watch cost none.
func TestServedBodyAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops objects at random under the race detector")
	}
	raw := "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4096\r\n\r\n" + strings.Repeat("x", 4096)
	drain := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, err := io.Copy(io.Discard, r.Body); n != 4096 || err != nil {
			t.Fatalf("handler read %d bytes, %v", n, err)
		}
	})
	mw := boundhttp.Middleware(limits.Budget{MaxWireBytes: 1 << 20, MaxDecodedBytes: 1 << 20})(drain)
	serve := func(h http.Handler) func() {
		w := deadlineRecorder{httptest.NewRecorder()}
		br := bufio.NewReader(nil)
		src := strings.NewReader(raw)
		return func() {
			src.Reset(raw)
			br.Reset(src)
			req, err := http.ReadRequest(br) // net/http's own body, as its server makes it
			if err != nil {
				t.Fatal(err)
			}
			w.Body = bytes.NewBuffer(w.Body.Bytes()[:0])
			h.ServeHTTP(w, req)
		}
	}
	own, ours := serve(drain), serve(mw)
	own()
	ours()
	base := testing.AllocsPerRun(200, own)
	const want = 1
	if got := testing.AllocsPerRun(200, ours) - base; got > want {
		t.Errorf("a whole body served allocated %v times beyond the handler's %v, want at most %d", got, base, want)
	}
}
