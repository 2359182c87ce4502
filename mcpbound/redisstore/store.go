package redisstore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// Defaults of [Config], used for its zero fields.
const (
	DefaultMaxBytes = mcpcore.DefaultStoreBytes // 64 MiB of results in all
	DefaultPrefix   = "mcpbound:results:"
	DefaultTimeout  = 5 * time.Second
	DefaultShards   = 8
)

// What Redis spends on a result besides its text, and on a tombstone,
// as the store charges them (see the package documentation for the
// formula): measured with MEMORY USAGE on Redis 7 (TestChargesCoverRedisMemory)
// and rounded up.
const (
	resultOverhead = 512 // the hash, its key, its index and charge entries
	pageOverhead   = 64  // a field of the hash
	tombOverhead   = 256 // the tombstone key and its index entry
)

// maxSweep is the most expired entries (results, and tombstones) a put
// gives back, and the most entries it evicts to make room: the work of one
// put is bounded, whatever accumulated since the last.
const maxSweep = 64

// Config configures a [Store]. Zero fields take the defaults; negative
// ones are configuration errors.
type Config struct {
	// MaxBytes bounds what the store keeps under Prefix in all: the bytes
	// (UTF-8 bytes of text) of its results, what Redis spends on each
	// result and page, and the tombstones that let a late read say
	// "expired". Each of Shards shards holds MaxBytes/Shards, so a result
	// larger than that is not kept. Zero means 64 MiB.
	MaxBytes int64
	// Prefix begins every key the store writes; one prefix per tenant (a
	// fleet, or a server sharing the Redis with others) keeps their results
	// and bounds apart. It may not hold '{' or '}': the store adds the
	// hash tags that spread the shards over a Redis Cluster's slots. Zero
	// means "mcpbound:results:".
	Prefix string
	// Timeout bounds each operation on Redis (a put, a read), on top of
	// the request's context. Zero means 5 seconds.
	Timeout time.Duration
	// Shards is how many shards the results are spread over, each with its
	// own hash tag (its slot of a Redis Cluster), bookkeeping and share of
	// MaxBytes, 1 to 256. Zero means 8.
	Shards int
}

// A Store is an [mcpcore.ResultStore] in Redis. It is safe for concurrent
// use; any number of instances (each with its own Store and client) may
// share one Redis and Prefix.
type Store struct {
	rdb redis.UniversalClient
	ttl time.Duration
	cfg Config
}

var _ mcpcore.ResultStore = (*Store)(nil)

// New returns a Store on rdb with the default Config whose results stay
// readable for ttl (zero means mcpcore.DefaultStoreTTL, 10 minutes).
func New(rdb redis.UniversalClient, ttl time.Duration) (*Store, error) {
	return Config{}.New(rdb, ttl)
}

// New returns a Store on rdb with this configuration whose results stay
// readable for ttl (zero means mcpcore.DefaultStoreTTL). It does not
// contact Redis: an unreachable Redis shows in the results, not here.
func (c Config) New(rdb redis.UniversalClient, ttl time.Duration) (*Store, error) {
	switch {
	case rdb == nil:
		return nil, errors.New("redisstore: no Redis client")
	case ttl < 0 || (ttl > 0 && ttl < time.Millisecond):
		return nil, fmt.Errorf("redisstore: time to live %v: below one millisecond (zero means the default, %v)", ttl, mcpcore.DefaultStoreTTL)
	case c.MaxBytes < 0:
		return nil, fmt.Errorf("redisstore: Config.MaxBytes %d: negative (zero means the default)", c.MaxBytes)
	case c.Timeout < 0:
		return nil, fmt.Errorf("redisstore: Config.Timeout %v: negative (zero means the default)", c.Timeout)
	case c.Shards < 0 || c.Shards > 256:
		return nil, fmt.Errorf("redisstore: Config.Shards %d: outside 1 to 256 (zero means the default, %d)", c.Shards, DefaultShards)
	case strings.ContainsAny(c.Prefix, "{}"):
		return nil, fmt.Errorf("redisstore: Config.Prefix %q: holds a brace; the store adds the hash tags of its shards itself", c.Prefix)
	case len(c.Prefix) > 128 || strings.ContainsFunc(c.Prefix, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return nil, fmt.Errorf("redisstore: Config.Prefix: more than 128 bytes, or spaces or control characters")
	}
	if ttl == 0 {
		ttl = mcpcore.DefaultStoreTTL
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Shards == 0 {
		c.Shards = DefaultShards
	}
	return &Store{rdb: rdb, ttl: ttl, cfg: c}, nil
}

// TTL returns how long a kept result stays readable.
func (s *Store) TTL() time.Duration { return s.ttl }

// Keys: under the prefix, each shard has a hash tag of its own ("{3}":
// its slot of a Redis Cluster) and its keys: a result (a hash of its MIME
// type, its page count and its pages), its tombstone (which outlives it so
// that a late read says "expired" rather than "unknown"), and the shard's
// bookkeeping. A result's shard is chosen by its id.
func (s *Store) base(id string) string {
	var h uint32
	for i := 0; i < len(id); i++ {
		h = h*31 + uint32(id[i])
	}
	return s.cfg.Prefix + "{" + strconv.Itoa(int(h%uint32(s.cfg.Shards))) + "}:"
}

// charges returns what a result of size bytes in n pages, and its
// tombstone, are charged.
func (s *Store) charges(id string, size int64, n int) (result, tomb int64) {
	keys := int64(len(s.base(id)) + len(id))
	return size + resultOverhead + int64(n)*pageOverhead + 3*keys, tombOverhead + 2*keys
}

// tombstoneTTL is how long past its expiry a result's tombstone stays.
func (s *Store) tombstoneTTL() time.Duration {
	return s.ttl + min(max(s.ttl, time.Hour), math.MaxInt64-s.ttl) // saturated
}

//go:embed put.lua
var putLua string

var putScript = redis.NewScript(putLua)

// Put keeps the pages of result id; see [mcpcore.ResultStore].
func (s *Store) Put(ctx context.Context, id, mimeType string, pages []string) error {
	var size int64
	for _, p := range pages {
		size += int64(len(p))
	}
	charge, tomb := s.charges(id, size, len(pages))
	bound := s.cfg.MaxBytes / int64(s.cfg.Shards)
	if charge+tomb > bound {
		return fmt.Errorf("%w: %d bytes, more than a shard of the store holds (%d bytes of %d)", mcpcore.ErrResultTooLarge, size, bound, s.cfg.MaxBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	base := s.base(id)
	args := make([]any, 0, 9+len(pages))
	args = append(args, id, charge, tomb, bound, s.ttl.Milliseconds(), s.tombstoneTTL().Milliseconds(), base, maxSweep, mimeType)
	for _, p := range pages {
		args = append(args, p)
	}
	keys := []string{base + "index", base + "tombs", base + "charges", base + "bytes", base + "r:" + id, base + "t:" + id}
	n, err := putScript.Run(ctx, s.rdb, keys, args...).Int()
	switch {
	case err != nil:
		return fmt.Errorf("redisstore: keeping a result: %w", err)
	case n != 1:
		return fmt.Errorf("%w: no room in the store (%d bytes)", mcpcore.ErrResultTooLarge, s.cfg.MaxBytes)
	}
	return nil
}

// Page returns page k (0-based) of result id; see [mcpcore.ResultStore].
func (s *Store) Page(ctx context.Context, id string, k int) (text, mimeType string, pages int, err error) {
	if k < 0 {
		return "", "", 0, fmt.Errorf("%w: page %d", mcpcore.ErrNoSuchPage, k+1)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	base := s.base(id)
	vals, err := s.rdb.HMGet(ctx, base+"r:"+id, "mime", "n", strconv.Itoa(k)).Result()
	if err != nil {
		return "", "", 0, fmt.Errorf("redisstore: reading a page: %w", err)
	}
	mime, _ := vals[0].(string)
	count, _ := vals[1].(string)
	if mime == "" && count == "" {
		// Gone: expired (its tombstone remains), or never kept, evicted to
		// make room, or lost when Redis restarted.
		n, err := s.rdb.Exists(ctx, base+"t:"+id).Result()
		switch {
		case err != nil:
			return "", "", 0, fmt.Errorf("redisstore: reading a page: %w", err)
		case n == 1:
			return "", "", 0, fmt.Errorf("%w (results are kept for %v)", mcpcore.ErrExpiredResult, s.ttl)
		}
		return "", "", 0, mcpcore.ErrUnknownResult
	}
	pages, err = strconv.Atoi(count)
	if err != nil || pages < 1 {
		return "", "", 0, fmt.Errorf("redisstore: result %s has a malformed page count %q", id, count)
	}
	if k >= pages {
		return "", "", 0, fmt.Errorf("%w: page %d of a result that has %d pages", mcpcore.ErrNoSuchPage, k+1, pages)
	}
	text, ok := vals[2].(string)
	if !ok {
		return "", "", 0, fmt.Errorf("redisstore: page %d of result %s is missing", k+1, id)
	}
	return text, mime, pages, nil
}
