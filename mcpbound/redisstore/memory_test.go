package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/mcpbound/redisstore"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// usedUnder returns what Redis reports (MEMORY USAGE, bytes) for every key
// under prefix, how many keys there are, and how many have no time to live.
func usedUnder(t *testing.T, rdb *redis.Client, prefix string) (bytes int64, keys, forever int) {
	t.Helper()
	ctx := context.Background()
	iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		n, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			continue // expired meanwhile
		}
		bytes += n
		keys++
		if ttl, _ := rdb.PTTL(ctx, k).Result(); ttl == -1 {
			forever++
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return bytes, keys, forever
}

// usedMemory returns Redis's used_memory (INFO memory), in bytes.
func usedMemory(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}

// TestChargesCoverRedisMemory pins the trap "a bound on the text is no
// bound on Redis": the store counted the bytes of results' text alone,
// while Redis spends memory on each result's hash, each page's field, each
// tombstone and the bookkeeping. 600 results (1 to 3 pages, 10 to 2000
// bytes) over 8 shards: what Redis reports for every key under the prefix
// (MEMORY USAGE) is at most what the store charges, plus 4 KiB of
// bookkeeping per shard; and no key lives without a time to live.
// Sabotage: charging the text alone (resultOverhead, pageOverhead and
// tombOverhead 0) fails the comparison.
func TestChargesCoverRedisMemory(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	store, err := redisstore.Config{Prefix: "charges:"}.New(rdb, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 600 {
		pages := make([]string, 1+i%3)
		for k := range pages {
			pages[k] = strings.Repeat("x", 10+(i*37+k*101)%1990)
		}
		if err := store.Put(ctx, fmt.Sprintf("%032x", i*7919), "text/plain", pages); err != nil {
			t.Fatal(err)
		}
	}
	used, keys, forever := usedUnder(t, rdb, "charges:")
	charged := sumBytes(t, rdb, "charges:")
	t.Logf("%d keys: Redis reports %d bytes, the store charges %d (%.2f)", keys, used, charged, float64(used)/float64(charged))
	if used > charged+8*4096 {
		t.Errorf("Redis uses %d bytes under the prefix, more than the %d charged and 32 KiB of bookkeeping", used, charged)
	}
	if forever > 0 {
		t.Errorf("%d of %d keys have no time to live", forever, keys)
	}
}

// TestFleetExpiredResultsStayWithinMaxBytes pins the trap "markers are
// results too": a tombstone per result lived its time to live plus at least
// an hour, uncounted and deleted only on eviction: with MaxBytes 256 KiB
// and a time to live of 100 ms, 6,000 results that expired left 6,000
// tombstones and 1.98 MB of Redis memory (7.6 times MaxBytes). Two
// instances (two Stores, two clients) on one redis-server put 10,000
// results of 100 to 300 bytes that expire; afterwards Redis's used_memory
// has grown by at most MaxBytes and 64 KiB (the scripts, the shards'
// bookkeeping and the keyspace's tables), and every key under the prefix
// has a time to live. Measured: +280 KB now; the store before this test
// (tombstones uncounted, bookkeeping without expiry) grew Redis by 842 KB,
// 3.2 times MaxBytes, and left 3 keys without a time to live: this test
// fails it.
func TestFleetExpiredResultsStayWithinMaxBytes(t *testing.T) {
	r := startRedis(t)
	const maxBytes = 256 << 10
	var stores []*redisstore.Store
	for range 2 {
		s, err := redisstore.Config{MaxBytes: maxBytes, Prefix: "fleet:"}.New(r.client(t), 100*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, s)
	}
	rdb := r.client(t)
	ctx := context.Background()
	// The scripts loaded and a first result put: the baseline.
	if err := stores[0].Put(ctx, strings.Repeat("0", 32), "text/plain", []string{"warm"}); err != nil {
		t.Fatal(err)
	}
	before := usedMemory(t, rdb)
	n := 10000
	if testing.Short() {
		n = 3000
	}
	var last string
	for i := range n {
		last = fmt.Sprintf("%032x", i+1)
		if err := stores[i%2].Put(ctx, last, "text/plain", []string{strings.Repeat("r", 100+i%200)}); err != nil {
			t.Fatal(err)
		}
	}
	// The event: the last result expired (Redis's own expiry; bounded wait).
	for i := 0; ; i++ {
		if n, _ := rdb.Exists(ctx, redisstore.ResultKey(stores[0], last)).Result(); n == 0 {
			break
		}
		if i == 200 {
			t.Fatal("the last result did not expire within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Reading every key under the prefix deletes those that expired and
	// that Redis's active expiry has not reached yet: what stays is what
	// the store keeps.
	used, keys, forever := usedUnder(t, rdb, "fleet:")
	after := usedMemory(t, rdb)
	t.Logf("%d results expired: used_memory %d -> %d (+%d); %d keys under the prefix, %d bytes by MEMORY USAGE; MaxBytes %d",
		n, before, after, after-before, keys, used, maxBytes)
	if after-before > maxBytes+64<<10 {
		t.Errorf("Redis grew by %d bytes, more than MaxBytes (%d) and 64 KiB", after-before, maxBytes)
	}
	if forever > 0 {
		t.Errorf("%d of %d keys have no time to live", forever, keys)
	}
}

// TestPutWorkIsBounded pins the trap "a put that sweeps everything": each
// put gave back every expired result in one script, so a put after a quiet
// spell did work in proportion to all that had expired. A put now gives
// back at most 64 expired results (and 64 tombstones): after 200 results
// expired, one put leaves 136 of them in the index and adds its own.
// Sabotage: a sweep limit of 1000 empties the index in one put.
func TestPutWorkIsBounded(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := context.Background()
	store, err := redisstore.Config{Prefix: "sweep:", Shards: 1}.New(rdb, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for i := range 200 {
		last = fmt.Sprintf("%032x", i+1)
		if err := store.Put(ctx, last, "text/plain", []string{"x"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; ; i++ { // the event: the last result expired (bounded wait)
		if n, _ := rdb.Exists(ctx, redisstore.ResultKey(store, last)).Result(); n == 0 {
			break
		}
		if i == 200 {
			t.Fatal("the last result did not expire within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := store.Put(ctx, strings.Repeat("f", 32), "text/plain", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.ZCard(ctx, "sweep:{0}:index").Result(); n != 200-64+1 {
		t.Errorf("after one put, the index holds %d results, want %d (64 expired given back)", n, 200-64+1)
	}
}

// TestResultLargerThanAShardIsNotKept states the price of the shards: each
// holds MaxBytes/Shards, so with 8 shards of 80,000 bytes a result of
// 12,000 bytes is refused (ErrResultTooLarge, the marker then says it was
// too large to keep) while one of 8,000 is kept.
func TestResultLargerThanAShardIsNotKept(t *testing.T) {
	r := startRedis(t)
	store, err := redisstore.Config{MaxBytes: 80000, Prefix: "shards:"}.New(r.client(t), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := store.Put(ctx, strings.Repeat("a", 32), "text/plain", []string{strings.Repeat("x", 8000)}); err != nil {
		t.Errorf("a result of 8000 bytes in shards of 10,000: %v", err)
	}
	if err := store.Put(ctx, strings.Repeat("b", 32), "text/plain", []string{strings.Repeat("x", 12000)}); !errors.Is(err, mcpcore.ErrResultTooLarge) {
		t.Errorf("a result of 12,000 bytes in shards of 10,000: %v, want ErrResultTooLarge", err)
	}
}
