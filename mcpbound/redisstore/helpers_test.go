package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// redisServer is a redis-server started by a test on loopback, with no
// persistence, in a temporary folder (see testenc.Redis).
type redisServer struct{ *testenc.Redis }

// startRedis starts a redis-server on a free loopback port.
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	return &redisServer{testenc.StartRedis(t)}
}

// start runs the server again on its address, empty.
func (r *redisServer) start() { r.Start() }

// stop kills the server and waits for it to exit.
func (r *redisServer) stop() { r.Stop() }

// client returns a new client of the server, closed when the test ends.
func (r *redisServer) client(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: 1, DialTimeout: time.Second})
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
