package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpbound"
)

// redisServer is a redis-server started by a test on loopback, with no
// persistence, in a temporary folder.
type redisServer struct {
	t    *testing.T
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts a redis-server on a free loopback port.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	testenc.NeedTool(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := &redisServer{t: t, addr: addr, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// start runs the server on r.addr and waits until it answers PING.
func (r *redisServer) start() {
	r.t.Helper()
	_, port, _ := net.SplitHostPort(r.addr)
	r.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--protected-mode", "yes")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	r.done = make(chan struct{})
	go func() { r.cmd.Wait(); close(r.done) }()
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: -1})
	defer c.Close()
	for i := 0; ; i++ { // bounded: 20 s at most
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-r.done:
			r.t.Fatalf("redis-server exited: %v", r.cmd.ProcessState)
		case <-time.After(100 * time.Millisecond):
		}
		if i == 100 {
			r.t.Fatalf("redis-server on %s did not answer: %v", r.addr, err)
		}
	}
}

// stop kills the server and waits for it to exit.
func (r *redisServer) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// client returns a new client of the server, closed when the test ends.
func (r *redisServer) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: r.addr, MaxRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// mixed returns n characters of one- to four-byte UTF-8.
var mixed = testenc.MixedText

// instance serves an MCP server whose tool "big" returns text, capped by
// limits, on loopback, and returns a client session to it.
func instance(t *testing.T, limits mcpbound.ServerLimits, text string) *mcp.ClientSession {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "fleet", Version: "v1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}})
	server.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	server.AddReceivingMiddleware(limits.Middleware())
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callBig calls the tool and returns its text and its link.
func callBig(t *testing.T, cs *mcp.ClientSession) (text, link string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			text = c.Text
		case *mcp.ResourceLink:
			link = c.URI
		}
	}
	return text, link
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s...%s", s[:150], s[len(s)-150:])
	}
	return s
}
