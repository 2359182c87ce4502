package crosssdk

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpbound/redisstore"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// TestFleetOnTwoSDKsSharesOneRedis: two instances of one MCP service behind
// a load balancer, one on mcp-go and one on the official Go SDK, each with
// its own client of one real redis-server (loopback, no persistence): a
// link the mcp-go instance mints reads byte-exact on the go-sdk instance,
// and one the go-sdk instance mints reads byte-exact on the mcp-go
// instance, each read by a client of that instance's SDK. Sabotage: the
// mcp-go instance on an in-memory store answers the go-sdk instance's link
// "unknown result link", and its own link is unknown on the other.
func TestFleetOnTwoSDKsSharesOneRedis(t *testing.T) {
	r := testenc.StartRedis(t)
	text := mixed(30000)
	urls := map[string]string{}
	for _, sdk := range sdks {
		rdb := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: 1, DialTimeout: time.Second})
		t.Cleanup(func() { rdb.Close() })
		store, err := redisstore.New(rdb, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		urls[sdk] = serve(t, sdk, &mcpcore.ServerLimits{MaxResultChars: 2000, Store: store}, tool{name: "text", text: text})
	}
	for _, minted := range sdks {
		reader := goSDK
		if minted == goSDK {
			reader = mcpGo
		}
		c := dial(t, minted, urls[minted], mcpcore.ClientLimits{}).call(t, "text")
		if c.uri == "" {
			t.Fatalf("the %s instance minted no link: %q", minted, clip(c.Text))
		}
		got, err := dial(t, reader, urls[reader], mcpcore.ClientLimits{}).readLink(c.uri)
		if err != nil || got != text {
			t.Errorf("a link of the %s instance read on the %s instance: %d of %d bytes, byte-exact %v, %v",
				minted, reader, len(got), len(text), got == text, err)
		}
	}
}
