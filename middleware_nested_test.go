package boundhttp_test

import (
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

// nestedServer serves mw(mux) with mux.Handle("/route", inner(h)): a global
// Middleware and another on one route, as routers are configured. h
// answers the size and a checksum of what it read.
func nestedServer(t *testing.T, outer, inner boundhttp.MiddlewareConfig) *httptest.Server {
	t.Helper()
	o, err := boundhttp.NewMiddleware(outer)
	if err != nil {
		t.Fatal(err)
	}
	i, err := boundhttp.NewMiddleware(inner)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/route", i(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		io.WriteString(w, sum(data))
	})))
	s := httptest.NewServer(o(mux))
	t.Cleanup(s.Close)
	return s
}

func postJSON(t *testing.T, url, coding string, data []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(data))
	if coding != "" {
		req.Header.Set("Content-Encoding", coding)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestNestedMiddlewareAcceptsValidCompressedBody pins the trap of a nested
// Middleware that checks the outer one's Content-Length (the decoded size)
// against its own wire limit: a 3 MiB body sent as a few KiB of gzip, under
// 1 MiB wire and 4 MiB decoded limits on both layers, must reach the
// handler whole.
func TestNestedMiddlewareAcceptsValidCompressedBody(t *testing.T) {
	t.Parallel()
	b := limits.Budget{MaxWireBytes: 1 << 20, MaxDecodedBytes: 4 << 20}
	s := nestedServer(t, boundhttp.MiddlewareConfig{Budget: b}, boundhttp.MiddlewareConfig{Budget: b})
	data := []byte("[" + strings.Repeat(`"abcdefgh",`, 3<<20/11) + `"x"]`)
	status, answer := postJSON(t, s.URL+"/route", "gzip", encode("gzip", data))
	if want := sum(data); status != 200 || answer != want {
		t.Errorf("nested Middleware, %d bytes as gzip: %d %q, want 200 %q", len(data), status, answer, want)
	}
}

// TestNestedMiddlewareChargesInFlightOnce pins that a body verified by the
// outer layer is not buffered and charged again by the inner one.
func TestNestedMiddlewareChargesInFlightOnce(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(64 << 20)
	b := limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}
	s := nestedServer(t, boundhttp.MiddlewareConfig{Budget: b, InFlight: f}, boundhttp.MiddlewareConfig{Budget: b, InFlight: f})
	data := text(2 << 20)
	if status, _ := postJSON(t, s.URL+"/route", "", data); status != 200 {
		t.Fatalf("nested Middleware, 2 MiB identity body: %d, want 200", status)
	}
	if peak, max := f.Peak(), int64(len(data)+256<<10); peak > max {
		t.Errorf("nested Middleware charged %d bytes in flight for a %d-byte body, want at most %d (charged once)", peak, len(data), max)
	}
	if f.InUse() != 0 {
		t.Errorf("InUse() = %d after the request, want 0", f.InUse())
	}
}

// TestNestedMiddlewareAppliesStricterInner pins that the inner layer still
// applies what it holds stricter than the outer one: its decoded limit at
// the exact boundary, its wire limit on the bytes that came off the wire,
// and its JSON check.
func TestNestedMiddlewareAppliesStricterInner(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	outer := boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}}
	inner := boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 64 << 10, MaxDecodedBytes: n},
		JSON: &limits.JSON{MaxDepth: 2}}
	s := nestedServer(t, outer, inner)
	doc := func(size int) []byte { return []byte("[\"" + strings.Repeat("a", size-4) + "\"]") }
	for _, tt := range []struct {
		name   string
		coding string
		data   []byte
		status int
		stage  string
	}{
		{"decoded limit-1", "gzip", doc(n - 1), 200, ""},
		{"decoded limit", "gzip", doc(n), 200, ""},
		{"decoded limit+1", "gzip", doc(n + 1), 413, "decoded"},
		{"wire over the inner's", "", doc(128 << 10), 413, "wire"},
		{"deeper than the inner's JSON", "gzip", []byte("[[[1]]]"), 413, "json"},
	} {
		status, answer := postJSON(t, s.URL+"/route", tt.coding, func() []byte {
			if tt.coding != "" {
				return encode(tt.coding, tt.data)
			}
			return tt.data
		}())
		if status != tt.status || (tt.stage != "" && string(problem(t, answer).Stage) != tt.stage) {
			t.Errorf("%s: %d %.80q, want %d %s", tt.name, status, answer, tt.status, tt.stage)
		}
	}
}

// TestNestedMiddlewareAdoptsAcrossInFlightBudgets pins the trap of an inner
// Middleware that takes over the outer one's verified body only when both
// charge the same InFlight: with another budget (or none named, the
// process default) it read the body again and took the outer's
// Content-Length, the decoded size, for wire bytes, refusing a valid
// compressed body 413. The charge stays on the outer layer's budget; the
// inner one charges nothing and still applies what it holds stricter.
func TestNestedMiddlewareAdoptsAcrossInFlightBudgets(t *testing.T) {
	t.Parallel()
	data := []byte("[\"" + strings.Repeat("a", 1<<20-4) + "\"]") // 1 MiB decoded, about 1 KiB of gzip
	wire := encode("gzip", data)
	outerBudget := limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}
	innerBudget := limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 2 << 20}
	for _, tt := range []struct {
		name     string
		sameF    bool // the inner layer names the outer's InFlight
		noInnerF bool // the inner layer names none (DefaultServerInFlight)
		inner    limits.Budget
		status   int
		stage    string
	}{
		{"same InFlight", true, false, innerBudget, 200, ""},
		{"different InFlight", false, false, innerBudget, 200, ""},
		{"inner without InFlight", false, true, innerBudget, 200, ""},
		{"inner stricter, different InFlight", false, false,
			limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 1<<20 - 1}, 413, "decoded"},
		{"inner wire stricter, different InFlight", false, false,
			limits.Budget{MaxWireBytes: int64(len(wire)) - 1, MaxDecodedBytes: 2 << 20}, 413, "wire"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			of, inf := limits.NewInFlight(64<<20), limits.NewInFlight(64<<20)
			inner := boundhttp.MiddlewareConfig{Budget: tt.inner, InFlight: inf}
			switch {
			case tt.sameF:
				inner.InFlight = of
			case tt.noInnerF:
				inner.InFlight = nil
			}
			s := nestedServer(t, boundhttp.MiddlewareConfig{Budget: outerBudget, InFlight: of}, inner)
			status, answer := postJSON(t, s.URL+"/route", "gzip", wire)
			if tt.status == 200 {
				if want := sum(data); status != 200 || answer != want {
					t.Fatalf("%d wire bytes of gzip, %d decoded: %d %.120q, want 200 %q", len(wire), len(data), status, answer, want)
				}
			} else if status != tt.status || string(problem(t, answer).Stage) != tt.stage {
				t.Fatalf("%d wire bytes of gzip, %d decoded: %d %.120q, want %d %s", len(wire), len(data), status, answer, tt.status, tt.stage)
			}
			if !tt.sameF && inf.Peak() != 0 {
				t.Errorf("the inner layer's InFlight peaked at %d, want 0 (the body is charged to the outer's)", inf.Peak())
			}
			if of.Peak() < int64(len(data)) {
				t.Errorf("the outer layer's InFlight peaked at %d, want at least the %d decoded bytes", of.Peak(), len(data))
			}
			if of.InUse() != 0 {
				t.Errorf("outer InFlight InUse() = %d after the request, want 0", of.InUse())
			}
		})
	}
}

// TestNestedInnerTimeoutUnderStreamingOuterIsItsOwn (trap: a layer that
// reports the breach of the layer below as its own): under a streaming
// Middleware, an inner one reads the whole body through the outer one's
// streamed body. The inner one's shorter Timeout ends a stalled read at
// its deadline, and the read fails through the outer body, which labels
// the failure with its own budget. The 408 must carry the inner Timeout
// and the time that passed, not claim the outer one's 10 s had.
func TestNestedInnerTimeoutUnderStreamingOuterIsItsOwn(t *testing.T) {
	t.Parallel()
	const inner, outer = 100 * time.Millisecond, 10 * time.Second
	s := nestedServer(t, boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{Timeout: outer}},
		boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: inner}})
	resp, answer, elapsed, _ := stalledPost(t, "stalled body, inner Timeout 100 ms under a streaming outer 10 s", s, "/route", 100)
	p := problem(t, string(answer))
	if resp.StatusCode != http.StatusRequestTimeout || p.Stage != "timeout" || p.Limit != inner.Milliseconds() ||
		p.Observed < inner.Milliseconds() || p.Observed > elapsed.Milliseconds() {
		t.Errorf("stalled body, inner Timeout 100 ms under a streaming outer 10 s, answered after %v: %d %s, want 408 stage timeout, limit 100, observed from 100 to the time that passed",
			elapsed, resp.StatusCode, answer)
	}
}
