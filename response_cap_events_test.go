package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// sseEvent returns one event of exactly n bytes, its blank line (eol
// twice) included: a data line padded to fit.
func sseEvent(n int, eol string) string {
	head, tail := "data: ", eol+eol
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// serveEvents serves the events, flushing after each, as an event stream
// behind a response cap of max bytes, and returns what a client read and
// the error that ended its read.
func serveEvents(t *testing.T, max int64, events []string) (string, error) {
	t.Helper()
	h := boundhttp.ResponseCap(max)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			if _, err := io.WriteString(w, e); err != nil {
				return
			}
			http.NewResponseController(w).Flush()
		}
	}))
	s := httptest.NewServer(h)
	defer s.Close()
	resp, err := http.Get(s.URL)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return string(got), err
}

// TestResponseCapHoldsEachEventOfAStream pins the trap of a response cap
// that is a cap on a session's lifetime: an event stream (an MCP session's
// GET stream of notifications and keep-alive pings) is capped per event,
// so any number of events within the cap pass, and one event over it
// aborts the stream; exactly the cap passes, one byte more fails, for
// every line ending.
func TestResponseCapHoldsEachEventOfAStream(t *testing.T) {
	t.Parallel()
	const max = 2048
	many := make([]string, 200) // 200 KiB in all, 100 times the cap
	for i := range many {
		many[i] = sseEvent(1024, "\n")
	}
	got, err := serveEvents(t, max, many)
	if err != nil || len(got) != 200*1024 {
		t.Errorf("200 events of 1 KiB under a 2 KiB cap: read %d bytes, %v; want all %d and a clean end", len(got), err, 200*1024)
	}
	for _, eol := range []string{"\n", "\r\n", "\r"} {
		for _, tt := range []struct {
			size int
			ok   bool
		}{{max - 1, true}, {max, true}, {max + 1, false}} {
			events := []string{sseEvent(100, eol), sseEvent(tt.size, eol), sseEvent(100, eol)}
			got, err := serveEvents(t, max, events)
			complete := err == nil && got == strings.Join(events, "")
			if complete != tt.ok {
				t.Errorf("event of %d bytes (line ending %q) under a %d-byte cap: read %d bytes, %v; want complete %v",
					tt.size, eol, max, len(got), err, tt.ok)
			}
		}
	}
}

// TestEventCapFollowsContentTypeSent pins the trap of a per-event cap
// chosen from a header the client never gets: the cap holds the status
// and sends the header as it stands when the response is sent, so a
// handler that declared text/event-stream at WriteHeader and then set
// another Content-Type sends a body that is not an event stream, and its
// whole must stay within the cap, however it is cut by blank lines.
func TestEventCapFollowsContentTypeSent(t *testing.T) {
	t.Parallel()
	for _, flush := range []bool{false, true} {
		h := boundhttp.ResponseCap(100)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.Header().Set("Content-Type", "application/json")
			for range 10 { // 10 "events" of 50 bytes: 500 bytes under a 100-byte cap
				if _, err := io.WriteString(w, sseEvent(50, "\n")); err != nil {
					return
				}
				if flush {
					http.NewResponseController(w).Flush()
				}
			}
		}))
		s := httptest.NewServer(h)
		resp, err := http.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") && len(got) > 100 {
			t.Errorf("flush %v: a %s body of %d bytes passed a 100-byte cap as if it were an event stream", flush, ct, len(got))
		}
	}
}
