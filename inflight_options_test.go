package boundhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// TestInFlightOptionLeavesNoChargeAfterHandler (trap: two ways to give one
// budget, and only one of them ends the charge): a streaming handler that
// never closes its body leaves InUse at 0 once it returns, whether the
// budget came as MiddlewareConfig.InFlight or as decoding.WithInFlight in
// DecodeOptions. Sabotage: ending the body's life only when the InFlight
// field is set (as before) left InUse at 65536 after every gzip request
// through the option.
func TestInFlightOptionLeavesNoChargeAfterHandler(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(4096))
	for _, way := range []string{"field", "option"} {
		f := limits.NewInFlight(1 << 20)
		c := boundhttp.MiddlewareConfig{Streaming: true}
		if way == "field" {
			c.InFlight = f
		} else {
			c.DecodeOptions = []decoding.Option{decoding.WithInFlight(f)}
		}
		returned := make(chan struct{}, 1)
		h := mustMW(t, c)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var buf [512]byte
			r.Body.Read(buf[:]) // starts the decoder, which is charged; never closed
			returned <- struct{}{}
		}))
		for range 3 {
			req := httptest.NewRequest("POST", "/", strings.NewReader(string(gz)))
			req.Header.Set("Content-Encoding", "gzip")
			h.ServeHTTP(httptest.NewRecorder(), req)
			<-returned
			if got := f.InUse(); got != 0 {
				t.Fatalf("%s: InUse() = %d after the handler returned, want 0", way, got)
			}
		}
		if f.Peak() == 0 {
			t.Fatalf("%s: nothing was charged", way)
		}
	}
}

// TestTransportInFlightOptionWaitsLikeField: on the Transport a budget
// given by decoding.WithInFlight in DecodeOptions behaves exactly as the
// InFlight field: a body that finds the budget full waits for room until
// the request's context ends (then fails with ErrBusy wrapping the
// context's error); with room it is charged until Close. Sabotage: letting only the InFlight field wait (as before)
// made the option's request fail at once with ErrBusy and no
// DeadlineExceeded.
func TestTransportInFlightOptionWaitsLikeField(t *testing.T) {
	t.Parallel()
	data := text(64 << 10)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	for _, way := range []string{"field", "option"} {
		f := limits.NewInFlight(1 << 20)
		tr := &boundhttp.Transport{}
		if way == "field" {
			tr.InFlight = f
		} else {
			tr.DecodeOptions = []decoding.Option{decoding.WithInFlight(f)}
		}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		full := inflight.NewHold(inflight.Of(f))
		full.Grow(f.Cap())

		// Full for good: the body waits until its context ends.
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
		_, err := c.Do(req)
		cancel()
		if !errors.Is(err, limits.ErrBusy) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: fetch while the budget is full = %v, want ErrBusy wrapping DeadlineExceeded (a wait)", way, err)
		}

		// With room, the body is charged until it is closed.
		full.Release()
		req, _ = http.NewRequest("GET", s.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: fetch once room is given back = %v", way, err)
		}
		got, _ := io.ReadAll(resp.Body)
		if f.InUse() == 0 || string(got) != string(data) {
			t.Errorf("%s: body of %d bytes, InUse %d while open; want the body, charged", way, len(got), f.InUse())
		}
		resp.Body.Close()
		if got := f.InUse(); got != 0 {
			t.Errorf("%s: InUse() = %d after Close, want 0", way, got)
		}
	}
}

// TestTwoInFlightBudgetsRefused: the InFlight field and a
// decoding.WithInFlight option naming another budget cannot both hold: the
// configuration is refused (by NewMiddleware, and by the Transport before
// any request is sent) instead of one of them being ignored. The same
// budget given both ways is accepted.
func TestTwoInFlightBudgetsRefused(t *testing.T) {
	t.Parallel()
	a, b := limits.NewInFlight(1<<20), limits.NewInFlight(1<<20)
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlight: a,
		DecodeOptions: []decoding.Option{decoding.WithInFlight(b)}}); err == nil {
		t.Errorf("NewMiddleware with two in-flight budgets = nil error, want one")
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlight: a,
		DecodeOptions: []decoding.Option{decoding.WithInFlight(a)}}); err != nil {
		t.Errorf("NewMiddleware with one budget given both ways = %v", err)
	}
	sent := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++ }))
	defer s.Close()
	tr := &boundhttp.Transport{InFlight: a, DecodeOptions: []decoding.Option{decoding.WithInFlight(b)}}
	req, _ := http.NewRequest("GET", s.URL, nil)
	if _, err := tr.RoundTrip(req); err == nil || sent != 0 {
		t.Errorf("Transport with two in-flight budgets: %v, %d requests sent; want an error and none", err, sent)
	}
}
