//lint:file-ignore SA1019 log notifications (deprecated in protocol 2026-07-28, functional for its window) are the traffic that filled a session's stream

package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// capSession serves the SDK's streamable handler (event streams, not JSON
// responses) behind the Middleware with a response cap of max bytes, and
// connects a client whose log notifications increment logs; breaches
// counts the responses over the cap.
func capSession(t *testing.T, max int64, keepAlive time.Duration, logs, breaches *atomic.Int64) (*mcp.Server, *mcp.ClientSession) {
	t.Helper()
	// Five pings in a row must fail before the SDK closes a session: one
	// slow ping on a loaded machine is not the trap.
	server := mcp.NewServer(&mcp.Implementation{Name: "cap", Version: "v1"},
		&mcp.ServerOptions{KeepAlive: keepAlive, KeepAliveFailureThreshold: 5})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{}, MaxResponseBytes: max,
		Observe: func(o boundhttp.Outcome) {
			if o.Kind == boundhttp.OutcomeResponseBreach {
				breaches.Add(1)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(sdk))
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { logs.Add(1) }})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return server, cs
}

// TestResponseCapKeepsSessionStreamWithNotifications pins the trap of a
// response cap that caps a session's lifetime: the SDK's long-lived GET
// stream carries every server notification, and 100 log notifications of
// 300 bytes (30 KB in all) under a 16 KiB cap must all arrive and every
// Log call succeed, since each event is within the cap.
func TestResponseCapKeepsSessionStreamWithNotifications(t *testing.T) {
	t.Parallel()
	var logs, breaches atomic.Int64
	server, cs := capSession(t, 16<<10, 0, &logs, &breaches)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	var ss *mcp.ServerSession
	for s := range server.Sessions() {
		ss = s
	}
	failed := 0
	for i := range 100 {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("%03d %s", i, strings.Repeat("x", 300))}); err != nil {
			failed++
		}
	}
	// The notifications are the events: wait for the hundredth, bounded.
	for i := 0; logs.Load() < 100 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if failed > 0 || logs.Load() != 100 || breaches.Load() != 0 {
		t.Errorf("100 log notifications under a 16 KiB response cap: %d Log calls failed, %d arrived, %d responses over the cap; want 0, 100 and 0",
			failed, logs.Load(), breaches.Load())
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("after the notifications, Ping: %v; want the session alive", err)
	}
}

// TestResponseCapKeepsSessionWithKeepAlive pins the same trap for the
// SDK's keep-alive pings: under a 1 KiB cap, pings every 150 ms for 3 s (20
// pings of about 90 bytes, more than the cap in all) must breach nothing
// and leave the session alive.
func TestResponseCapKeepsSessionWithKeepAlive(t *testing.T) {
	t.Parallel()
	var logs, breaches atomic.Int64
	_, cs := capSession(t, 1<<10, 150*time.Millisecond, &logs, &breaches)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline) && i < 100; i++ {
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("after %d rounds of 100 ms with keep-alive pings under a 1 KiB response cap, Ping: %v; want the session alive", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := breaches.Load(); n != 0 {
		t.Errorf("keep-alive pings under a 1 KiB response cap: %d responses over the cap, want 0 (each ping is one small event)", n)
	}
}
