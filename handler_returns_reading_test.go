package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestBreachWrittenAfterTimeoutHandlerReturned (trap: the rejection of a
// streaming body read unsynchronised by serve): http.TimeoutHandler returns
// its 503 while the handler inside it still runs, and that handler may
// still be reading its body. The Middleware then asks the body for its
// breach while that Read records one. Run under -race: the breach must be
// handed over between goroutines, and the in-flight charge of the Read
// still in progress must come back once it returns.
func TestBreachWrittenAfterTimeoutHandlerReturned(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(1 << 20)
	mw := mustMW(t, boundhttp.MiddlewareConfig{Streaming: true, InFlight: f,
		Budget: limits.Budget{MaxDecodedBytes: 100}})
	for round := range 20 {
		finished := make(chan error, 1)
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // TimeoutHandler gave up: it is returning
			_, err := io.ReadAll(r.Body)
			finished <- err
		})
		h := mw(http.TimeoutHandler(inner, time.Nanosecond, "timeout"))
		req := httptest.NewRequest("POST", "/", bytes.NewReader(encode("gzip", text(4096))))
		req.Header.Set("Content-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the inner handler never finished reading", round)
		}
		if got := f.InUse(); got != 0 {
			t.Fatalf("round %d: InUse() = %d after the inner handler's Read returned, want 0", round, got)
		}
	}
}
