package redisstore_test

import (
	"context"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpcore"
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

// instance is one server instance of a fleet, as the core sees it: its
// tool returns text, capped by limits.
type instance struct {
	srv  *mcpcore.Server
	text string
}

// newInstance returns an instance whose tool returns text, capped by limits.
func newInstance(t *testing.T, limits mcpcore.ServerLimits, text string) *instance {
	t.Helper()
	srv, err := mcpcore.NewServer(limits)
	if err != nil {
		t.Fatal(err)
	}
	return &instance{srv: srv, text: text}
}

// callBig calls the tool and returns the text of its result and its link.
func (in *instance) callBig(t *testing.T) (text, link string) {
	t.Helper()
	rep := in.srv.Cap(context.Background(), mcpcore.Result{Content: []mcpcore.Content{{Kind: mcpcore.Text, Text: in.text}}})
	if rep == nil {
		return in.text, ""
	}
	if rep.Link != nil {
		link = rep.Link.URI
	}
	return rep.Text, link
}

// read reads one page of a link through the instance.
func (in *instance) read(uri string) (*mcpcore.ResultPage, error) {
	return in.srv.Read(context.Background(), uri)
}

// readLink follows a link to its end through the instance.
func (in *instance) readLink(uri string, maxPages, maxChars int) (string, error) {
	return mcpcore.FollowLink(context.Background(), uri, maxPages, maxChars, func(ctx context.Context, uri string) ([]string, string, error) {
		p, err := in.srv.Read(ctx, uri)
		if err != nil {
			return nil, "", err
		}
		return []string{p.Data}, p.Next, nil
	})
}

// clip shortens s for a message.
var clip = testenc.Clip
