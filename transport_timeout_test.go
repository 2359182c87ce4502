package boundhttp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// slowBody returns its bytes and io.EOF in one Read that blocks for delay
// first and does not watch any context: a source that only the clock can
// judge.
type slowBody struct {
	data  []byte
	delay time.Duration
	done  bool
}

func (s *slowBody) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	time.Sleep(s.delay)
	s.done = true
	return copy(p, s.data), io.EOF
}

func (s *slowBody) Close() error { return nil }

// TestTimeoutRunsFromHeaders pins where Budget.Timeout starts on the
// client: at the response headers, so a server that sends its headers and
// then waits before the first body byte is cut off; and a body whose end
// arrives after the deadline is rejected even when its source ignored the
// cancellation.
func TestTimeoutRunsFromHeaders(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(600 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "hello")
	}))
	defer s.Close()
	for _, streaming := range []bool{false, true} {
		tr := &boundhttp.Transport{Streaming: streaming, Budget: limits.Budget{Timeout: 200 * time.Millisecond}}
		if _, _, err := get(t, tr, s.URL); stageOf(err) != "timeout" {
			t.Errorf("headers, then 600 ms before the first byte (streaming %v), timeout 200 ms: %v, want stage timeout", streaming, err)
		}
	}
	// Sources that ignore the cancellation: only the clock can judge them.
	data := []byte("a body that ended too late")
	for _, tt := range []struct {
		streaming bool
		delay     time.Duration // inside the source's only Read
		wait      time.Duration // the caller's, before the first Read
	}{
		{false, 400 * time.Millisecond, 0},
		{true, 400 * time.Millisecond, 0},
		// The decoder's own clock starts at its first Read; the Transport's
		// at the headers.
		{true, 0, 400 * time.Millisecond},
	} {
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(data)),
				Body: &slowBody{data: data, delay: tt.delay}}, nil
		})
		tr := &boundhttp.Transport{Base: base, Streaming: tt.streaming, Budget: limits.Budget{Timeout: 100 * time.Millisecond}}
		resp, err := (&http.Client{Transport: tr}).Get("http://example.invalid/")
		var got []byte
		if err == nil {
			time.Sleep(tt.wait)
			got, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if stageOf(err) != "timeout" || bytes.Equal(got, data) && !tt.streaming {
			t.Errorf("body ending %v after the headers (streaming %v, first Read after %v), timeout 100 ms: %q, %v; want stage timeout",
				tt.delay+tt.wait, tt.streaming, tt.wait, got, err)
		}
	}
}

// TestInFlightWaitCutByDeadlineIsTimeout pins the trap of a deadline that
// net/http-style code cannot see: a body that waits for room in InFlight
// until the request's deadline fails with a *limits.Error of stage
// inflight wrapping context.DeadlineExceeded, and its Timeout method
// (asked first by errors.As, and by *url.Error through ResponseError)
// reported false, the deadline it wraps unseen. A wait ended by a cancel,
// and a size rejection, are no timeouts.
func TestInFlightWaitCutByDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(make([]byte, 1000))
	}))
	defer s.Close()
	tr := &boundhttp.Transport{InFlight: limits.NewInFlight(1500)}
	held, err := tr.RoundTrip(newGet(t, s.URL)) // 1000 of 1500, until the end
	if err != nil {
		t.Fatal(err)
	}
	defer held.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
	_, err = (&http.Client{Transport: tr}).Do(req)
	var le *limits.Error
	if !errors.As(err, &le) || le.Stage != limits.StageInFlight || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch that waits past its deadline: %v, want an inflight rejection wrapping the deadline", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("inflight wait cut by the deadline, through http.Client: Timeout false, want true (%v)", err)
	}
	for _, c := range []struct {
		err  *limits.Error
		want bool
	}{
		{&limits.Error{Stage: limits.StageInFlight, Err: context.DeadlineExceeded}, true},
		{&limits.Error{Stage: limits.StageInFlight, Err: context.Canceled}, false},
		{&limits.Error{Stage: limits.StageDecoded}, false},
		{&limits.Error{Stage: limits.StageTimeout}, true},
	} {
		if got := c.err.Timeout(); got != c.want {
			t.Errorf("%v (cause %v): Timeout %v, want %v", c.err.Stage, c.err.Err, got, c.want)
		}
	}
}
