package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestUnreadBodyLeavesKeepAliveConnectionUsable: a handler that answers
// without reading the body (an auth check's 401) leaves the keep-alive
// connection as net/http would: the next request on it starts with a live
// context, whatever sits outside the Middleware (a layer that works after
// the handler returned gives net/http's background read the time to see a
// read deadline in the past), in streaming and whole-body mode, and the
// connection is reused. Stock net/http is the control. Sabotage: ending the
// drain with a read deadline in the past (as it did) cancels the next
// requests' contexts, in streaming mode with the outer layer all of them.
func TestUnreadBodyLeavesKeepAliveConnectionUsable(t *testing.T) {
	t.Parallel()
	rounds := 50
	if testing.Short() {
		rounds = 20
	}
	budget := limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}
	type layer struct {
		name  string
		wrap  func(http.Handler) http.Handler
		outer bool
	}
	layers := []layer{
		{"stock", func(h http.Handler) http.Handler { return h }, false},
		{"stock/outer", func(h http.Handler) http.Handler { return h }, true},
		{"streaming", mustMW(t, boundhttp.MiddlewareConfig{Budget: budget, Streaming: true}), false},
		{"streaming/outer", mustMW(t, boundhttp.MiddlewareConfig{Budget: budget, Streaming: true}), true},
		{"streaming/timeout/outer", mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 4 << 20, Timeout: time.Minute}, Streaming: true}), true},
		{"whole/outer", mustMW(t, boundhttp.MiddlewareConfig{Budget: budget}), true},
	}
	// 2 KiB: net/http reads the unread body itself as the answer's headers
	// go out, and the connection is reused; 1 MiB: over net/http's 256 KiB,
	// it closes the connection after the answer, with and without us.
	for _, size := range []int{2 << 10, 1 << 20} {
		for _, tc := range layers {
			t.Run(fmt.Sprintf("%s/%d", tc.name, size), func(t *testing.T) {
				unreadBodyKeepAlive(t, tc.wrap, tc.outer, size, rounds, size <= 256<<10)
			})
		}
	}
}

// unreadBodyKeepAlive sends rounds POSTs of size bytes over one keep-alive
// connection to a handler, wrapped by wrap (and an outer layer that works
// after it, if outer), that answers 401 without reading; it fails if a
// request began with a done context, or, if reuse, if a new connection was
// made.
func unreadBodyKeepAlive(t *testing.T, wrap func(http.Handler) http.Handler, outer bool, size, rounds int, reuse bool) {
	t.Parallel()
	inner := wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.Context().Err(); err != nil {
			http.Error(w, "context done at entry: "+err.Error(), http.StatusInternalServerError)
			return
		}
		http.Error(w, "who are you?", http.StatusUnauthorized) // the body is never read
	}))
	served := make(chan struct{}, 1)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r)
		if outer {
			// Work after the handler: an access log, a metrics update.
			// The connection's reader runs meanwhile.
			for start := time.Now(); time.Since(start) < 200*time.Microsecond; {
			}
		}
		served <- struct{}{}
	}))
	t.Cleanup(s.Close)
	tr := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	body := bytes.Repeat([]byte("x"), size)
	var cancelled, newConns int
	for i := range rounds {
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if !info.Reused && i > 0 {
				newConns++
			}
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodPost, s.URL, bytes.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The next request follows the end of this one's handler after a
		// client's think time (the workload's pacing, not a
		// synchronisation): a byte that comes sooner ends net/http's
		// background read before a deadline in the past can.
		<-served
		time.Sleep(time.Millisecond)
		switch {
		case resp.StatusCode == http.StatusInternalServerError && strings.Contains(string(got), "context done"):
			cancelled++
		case resp.StatusCode != http.StatusUnauthorized:
			t.Fatalf("request %d: status %d %q, want 401", i, resp.StatusCode, got)
		}
	}
	if !reuse {
		newConns = 0
	}
	if cancelled > 0 || newConns > 0 {
		t.Errorf("%d of %d requests began with a done context; %d new connections, want 0 and 0", cancelled, rounds, newConns)
	}
}
