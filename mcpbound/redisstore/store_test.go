package redisstore_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/mcpbound/redisstore"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// TestFleetReadsAnotherInstancesLink: two server instances, each with its
// own client of one real redis-server; the client gets a link from one and
// reads every page from the other, byte-exact. Sabotage: an instance with
// an in-memory store in place of Redis answers the other's link "unknown".
func TestFleetReadsAnotherInstancesLink(t *testing.T) {
	r := startRedis(t)
	text := mixed(300000)
	var sessions []*instance
	for range 2 {
		store, err := redisstore.New(r.client(t), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, newInstance(t, mcpcore.ServerLimits{MaxResultChars: 20000, Store: store}, text))
	}
	preview, link := sessions[0].callBig(t)
	if link == "" {
		t.Fatalf("no link from instance A: %q", clip(preview))
	}
	pages := 0
	var b strings.Builder
	for uri := link; uri != "" && pages < 100; pages++ {
		page, err := sessions[1].read(uri)
		if err != nil {
			t.Fatalf("instance B, page %d: %v", pages+1, err)
		}
		b.WriteString(page.Data)
		uri = page.Next
		if pages == 0 {
			t.Logf("instance B, page 1 of %v: %d characters of data, note %q", page.Pages, len([]rune(page.Data)), page.Note)
		}
	}
	if b.String() != text {
		t.Errorf("instance B: %d pages join to %d bytes, want the %d bytes of the result", pages, b.Len(), len(text))
	}
	got, err := sessions[1].readLink(link, 100, 1<<20)
	if err != nil || got != text {
		t.Errorf("ReadLink on instance B: %d bytes, %v", len(got), err)
	}
	t.Logf("instance A linked %s; instance B read %d pages, %d bytes, byte-exact %v", link, pages, len(got), got == text)
}

// TestExpiredLinkSaysExpired: after the time to live (Redis's own expiry)
// a read says the link expired, not that it is unknown; a link never
// issued is unknown. Sabotage: no tombstone makes the expired link read
// "unknown".
func TestExpiredLinkSaysExpired(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	store, err := redisstore.New(rdb, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := strings.Repeat("ab", 16)
	if err := store.Put(ctx, id, "text/plain", []string{"one", "two"}); err != nil {
		t.Fatal(err)
	}
	if text, _, n, err := store.Page(ctx, id, 1); err != nil || text != "two" || n != 2 {
		t.Fatalf("page 2: %q of %d, %v", text, n, err)
	}
	// The event: Redis expires the result's key (bounded wait).
	for i := 0; ; i++ {
		n, err := rdb.Exists(ctx, redisstore.ResultKey(store, id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if i == 200 {
			t.Fatal("the result did not expire within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, _, _, err := store.Page(ctx, id, 0); !errors.Is(err, mcpcore.ErrExpiredResult) {
		t.Errorf("read after the time to live: %v, want ErrExpiredResult", err)
	}
	if _, _, _, err := store.Page(ctx, strings.Repeat("cd", 16), 0); !errors.Is(err, mcpcore.ErrUnknownResult) {
		t.Errorf("read of a link never issued: %v, want ErrUnknownResult", err)
	}
}

// TestRedisStoppedMidRead: Redis stopped between two pages makes the next
// read a clear error (the store failed, and why), never a panic or a
// prefix taken as the whole; a tools/call meanwhile is cut with the marker
// saying the full result could not be kept; after Redis restarts (no
// persistence) the link is unknown. Sabotage: a Page that returns an empty
// page on a Redis error passes the read with a prefix.
func TestRedisStoppedMidRead(t *testing.T) {
	r := startRedis(t)
	store, err := redisstore.Config{Timeout: 2 * time.Second}.New(r.client(t), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	text := mixed(5000)
	cs := newInstance(t, mcpcore.ServerLimits{MaxResultChars: 1000, Store: store}, text)
	_, link := cs.callBig(t)
	page, err := cs.read(link)
	if err != nil {
		t.Fatal(err)
	}
	next := page.Next
	r.stop()
	_, err = cs.read(next)
	if err == nil || !strings.Contains(err.Error(), "the result store failed") || !strings.Contains(err.Error(), "redisstore") {
		t.Errorf("page 2 with Redis stopped: %v, want an error saying the store failed", err)
	}
	t.Logf("page 2 with Redis stopped: %v", err)
	if _, err := cs.readLink(link, 100, 1<<20); err == nil {
		t.Error("ReadLink with Redis stopped returned a result")
	}
	preview, l := cs.callBig(t)
	if l != "" || !strings.Contains(preview, "[truncated: showing ") || !strings.Contains(preview, "could not be kept") {
		t.Errorf("tools/call with Redis stopped: link %q, %q", l, clip(preview))
	}
	r.start()
	_, err = cs.read(next)
	if err == nil || !strings.Contains(err.Error(), "unknown result link") {
		t.Errorf("page 2 after Redis restarted empty: %v, want unknown", err)
	}
}

// TestStoreBound: what the store keeps under its prefix never passes
// MaxBytes, its charges (results, their pages and tombstones) included; the
// oldest go, and their links read "unknown"; a result bigger than a shard is
// refused with ErrResultTooLarge; every key is under the prefix; and two
// prefixes share one Redis without touching each other. Sabotage: a put
// script that never evicts passes the bound.
func TestStoreBound(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := context.Background()
	const bound = 10000
	store, err := redisstore.Config{MaxBytes: bound, Prefix: "fleet-a:", Shards: 1}.New(rdb, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := redisstore.Config{MaxBytes: bound, Prefix: "fleet-b:", Shards: 1}.New(rdb, time.Minute)
	keep := strings.Repeat("f", 32)
	if err := other.Put(ctx, keep, "text/plain", []string{strings.Repeat("o", 4000)}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 6 {
		id := strings.Repeat(string(rune('0'+i)), 32)
		ids = append(ids, id)
		if err := store.Put(ctx, id, "text/plain", []string{strings.Repeat("x", 1000), strings.Repeat("y", 1000)}); err != nil {
			t.Fatal(err)
		}
		if total := sumBytes(t, rdb, "fleet-a:"); total > bound {
			t.Errorf("after %d results the store counts %d bytes, bound %d", i+1, total, bound)
		}
	}
	if _, _, _, err := store.Page(ctx, ids[0], 0); !errors.Is(err, mcpcore.ErrUnknownResult) {
		t.Errorf("the oldest result: %v, want ErrUnknownResult (evicted)", err)
	}
	if text, _, _, err := store.Page(ctx, ids[5], 1); err != nil || text != strings.Repeat("y", 1000) {
		t.Errorf("the newest result: %v", err)
	}
	if _, _, _, err := store.Page(ctx, ids[5], 2); !errors.Is(err, mcpcore.ErrNoSuchPage) {
		t.Errorf("page 3 of 2: %v", err)
	}
	if err := store.Put(ctx, strings.Repeat("9", 32), "text/plain", []string{strings.Repeat("z", bound)}); !errors.Is(err, mcpcore.ErrResultTooLarge) {
		t.Errorf("a result of %d bytes in a store of %d: %v", bound, bound, err)
	}
	if text, _, _, err := other.Page(ctx, keep, 0); err != nil || len(text) != 4000 {
		t.Errorf("the other prefix's result: %v", err)
	}
	keys, _ := rdb.Keys(ctx, "*").Result()
	for _, k := range keys {
		if !strings.HasPrefix(k, "fleet-a:") && !strings.HasPrefix(k, "fleet-b:") {
			t.Errorf("key %q outside the prefixes", k)
		}
	}
	var real int64
	for _, id := range ids {
		if n, _ := rdb.Exists(ctx, redisstore.ResultKey(store, id)).Result(); n == 1 {
			real += 2000
		}
	}
	if real > bound {
		t.Errorf("Redis holds %d bytes of results under the prefix, bound %d", real, bound)
	}
}

// sumBytes returns the charge the shards under prefix count.
func sumBytes(t *testing.T, rdb *redis.Client, prefix string) int64 {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), prefix+"{*}:bytes").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, k := range keys {
		v, _ := rdb.Get(context.Background(), k).Int64()
		n += v
	}
	return n
}

// TestConfigValidate: the boundaries of New's arguments.
func TestConfigValidate(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, tc := range []struct {
		name string
		c    redisstore.Config
		rdb  redis.UniversalClient
		ttl  time.Duration
		ok   bool
	}{
		{"defaults", redisstore.Config{}, rdb, 0, true},
		{"no client", redisstore.Config{}, nil, 0, false},
		{"negative ttl", redisstore.Config{}, rdb, -1, false},
		{"ttl under a millisecond", redisstore.Config{}, rdb, time.Millisecond - 1, false},
		{"ttl a millisecond", redisstore.Config{}, rdb, time.Millisecond, true},
		{"huge ttl", redisstore.Config{}, rdb, math.MaxInt64, true},
		{"negative MaxBytes", redisstore.Config{MaxBytes: -1}, rdb, 0, false},
		{"huge MaxBytes", redisstore.Config{MaxBytes: math.MaxInt64}, rdb, 0, true},
		{"negative Timeout", redisstore.Config{Timeout: -1}, rdb, 0, false},
		{"negative Shards", redisstore.Config{Shards: -1}, rdb, 0, false},
		{"one shard", redisstore.Config{Shards: 1}, rdb, 0, true},
		{"256 shards", redisstore.Config{Shards: 256}, rdb, 0, true},
		{"257 shards", redisstore.Config{Shards: 257}, rdb, 0, false},
		{"a prefix with a hash tag", redisstore.Config{Prefix: "tenant:{a}:"}, rdb, 0, false},
		{"a prefix with a space", redisstore.Config{Prefix: "tenant a:"}, rdb, 0, false},
		{"a prefix of 128 bytes", redisstore.Config{Prefix: strings.Repeat("p", 128)}, rdb, 0, true},
		{"a prefix of 129 bytes", redisstore.Config{Prefix: strings.Repeat("p", 129)}, rdb, 0, false},
	} {
		_, err := tc.c.New(tc.rdb, tc.ttl)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok %v", tc.name, err, tc.ok)
		}
	}
	s, _ := redisstore.New(rdb, 0)
	if s.TTL() != mcpcore.DefaultStoreTTL {
		t.Errorf("default TTL %v", s.TTL())
	}
}
