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
// # Keys
//
// Every key begins with Config.Prefix (one prefix per tenant: a fleet, or
// each server sharing the Redis), then a shard's hash tag: "{0}" to
// "{N-1}" for Config.Shards shards, each its own slot of a Redis Cluster. A
// result's id chooses its shard. Under "<prefix>{k}:" are the result (a
// hash "r:<id>" of its MIME type, its page count and its pages), its
// tombstone ("t:<id>", which outlives it so that a late read says
// "expired" rather than "unknown") and the shard's bookkeeping ("index"
// and "tombs", sorted sets of expiry times; "charges", a hash; "bytes",
// the shard's total). Every key has a time to live: a result its TTL, a
// tombstone the TTL and max(TTL, 1 hour) more, the bookkeeping as long as
// its last tombstone.
//
// # Memory
//
// What the store keeps under the prefix is charged against Config.MaxBytes,
// each shard MaxBytes/Shards (a result that does not fit one shard is not
// kept):
//
//	result:    its bytes + 512 + 64 per page + 3*(len(key base)+len(id))
//	tombstone: 256 + 2*(len(key base)+len(id)), until it expires
//
// These cover what Redis reports for the keys (MEMORY USAGE, Redis 7: 0.9
// of the charge for results of 10 to 6000 bytes). Redis's memory under the
// prefix is MaxBytes at most, plus about 4 KiB of bookkeeping per shard and
// the keyspace's own tables; after 10,000 results of two instances expired
// with MaxBytes 256 KiB, used_memory had grown by 280 KB. A put gives back
// at most 64 expired results and 64 expired tombstones, and evicts at most
// 64 entries (the oldest results first, then the oldest tombstones) to make
// room: its work is bounded, and a result that still does not fit is not
// kept. An evicted result's link reads as unknown.
//
// Redis itself must not evict the bookkeeping of a store that still holds
// results: give it maxmemory-policy noeviction, or a volatile-* policy with
// room (every key has a time to live, so allkeys-* and volatile-* evict
// alike; an evicted counter is detected and started again, and its shard
// holds more than its share until its results expire).
//
// Redis is another process: when it cannot be reached, a tools/call result
// is cut with the marker saying that the full result could not be kept,
// and a read of a page fails with an error that says the store failed;
// after Redis restarts without persistence, links read as unknown. No
// operation waits longer than Config.Timeout, and nothing panics or
// returns part of a page as a page.
package redisstore
