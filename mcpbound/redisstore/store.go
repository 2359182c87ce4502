package redisstore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// Defaults of [Config], used for its zero fields.
const (
	DefaultMaxBytes = mcpcore.DefaultStoreBytes // 64 MiB of results in all
	DefaultPrefix   = "mcpbound:{results}:"
	DefaultTimeout  = 5 * time.Second
)

// Config configures a [Store]. Zero fields take the defaults; negative
// ones are configuration errors.
type Config struct {
	// MaxBytes bounds the bytes (UTF-8 bytes of text) of all results kept
	// under Prefix, and so the bytes of one. Zero means 64 MiB.
	MaxBytes int64
	// Prefix begins every key the store writes. Zero means
	// "mcpbound:{results}:"; a prefix of another fleet (another server
	// sharing the Redis) keeps its results and its bound apart. For Redis
	// Cluster, keep a hash tag ({...}) in it.
	Prefix string
	// Timeout bounds each operation on Redis (a put, a read), on top of
	// the request's context. Zero means 5 seconds.
	Timeout time.Duration
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
	return &Store{rdb: rdb, ttl: ttl, cfg: c}, nil
}

// TTL returns how long a kept result stays readable.
func (s *Store) TTL() time.Duration { return s.ttl }

// Keys under the prefix: the result (a hash of its MIME type, its page
// count and its pages), a tombstone that outlives it so that a late read
// says "expired" rather than "unknown", and the bookkeeping of the bound.
func (s *Store) resultKey(id string) string { return s.cfg.Prefix + "r:" + id }
func (s *Store) tombKey(id string) string   { return s.cfg.Prefix + "t:" + id }
func (s *Store) indexKey() string           { return s.cfg.Prefix + "index" } // id by expiry, oldest first
func (s *Store) sizesKey() string           { return s.cfg.Prefix + "sizes" } // id to bytes
func (s *Store) bytesKey() string           { return s.cfg.Prefix + "bytes" } // bytes of all results

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
	if size > s.cfg.MaxBytes {
		return fmt.Errorf("%w: %d bytes, more than the whole store (%d bytes)", mcpcore.ErrResultTooLarge, size, s.cfg.MaxBytes)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	args := make([]any, 0, 7+len(pages))
	args = append(args, id, size, s.cfg.MaxBytes, s.ttl.Milliseconds(), s.tombstoneTTL().Milliseconds(), s.cfg.Prefix, mimeType)
	for _, p := range pages {
		args = append(args, p)
	}
	keys := []string{s.indexKey(), s.sizesKey(), s.bytesKey(), s.resultKey(id), s.tombKey(id)}
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
	vals, err := s.rdb.HMGet(ctx, s.resultKey(id), "mime", "n", strconv.Itoa(k)).Result()
	if err != nil {
		return "", "", 0, fmt.Errorf("redisstore: reading a page: %w", err)
	}
	mime, _ := vals[0].(string)
	count, _ := vals[1].(string)
	if mime == "" && count == "" {
		// Gone: expired (its tombstone remains), or never kept, evicted to
		// make room, or lost when Redis restarted.
		n, err := s.rdb.Exists(ctx, s.tombKey(id)).Result()
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
