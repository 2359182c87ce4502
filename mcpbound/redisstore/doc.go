// Package redisstore keeps the tool results that ServerLimits does not send
// whole in Redis, so that a link minted by one instance of a server is
// readable on any other (several instances behind a load balancer, or a
// stateless streamable handler), whichever adapter each instance uses
// (mcpbound for the official Go SDK, mcpbound/mcpgo for mark3labs/mcp-go):
//
//	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379"})
//	store, err := redisstore.New(rdb, 10*time.Minute)
//	...
//	srv.AddReceivingMiddleware(mcpbound.ServerLimits{MaxResultChars: 20000, Store: store}.Middleware())
//
// It depends on the SDK-agnostic core (github.com/boundhttp/boundhttp/mcpcore)
// alone, so building it builds no MCP SDK.
//
// Each instance calls New with its own client. The pages are split by the
// middleware before they are kept, so every instance serves the same pages.
//
// The store is bounded as the in-memory mcpcore.Store is: at most
// Config.MaxBytes bytes (UTF-8 bytes of text) of results in all, the
// oldest removed first to make room, and a result bigger than that not
// kept. Results expire after the time to live, by Redis's own expiry. All
// keys begin with Config.Prefix, whose hash tag puts them in one slot of a
// Redis Cluster (the scripts touch several keys at once).
//
// Redis is another process: when it cannot be reached, a tools/call result
// is cut with the marker saying that the full result could not be kept,
// and a read of a page fails with an error that says the store failed;
// after Redis restarts without persistence, links read as unknown. No
// operation waits longer than Config.Timeout, and nothing panics or
// returns part of a page as a page.
package redisstore
