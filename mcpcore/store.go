package mcpcore

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"
)

// Store defaults, used for a zero argument of [NewStore].
const (
	DefaultStoreBytes = 64 << 20         // bytes of text kept in all
	DefaultStoreTTL   = 10 * time.Minute // how long a result stays readable
)

// Errors of a [ResultStore], matched with errors.Is. Every store returns
// them (wrapped, with more detail if it likes), so that a reader is told the
// same thing whichever store kept the result.
var (
	ErrUnknownResult  = errors.New("mcpbound: unknown result link (never issued, or evicted to make room for newer results)")
	ErrExpiredResult  = errors.New("mcpbound: result link expired")
	ErrResultTooLarge = errors.New("mcpbound: result too large to keep")
	ErrNoSuchPage     = errors.New("mcpbound: no such page")
)

// A ResultStore keeps the full results that [ServerLimits] does not send
// whole, so that any server with the same store can serve their pages
// through resources/read: [Store] keeps them in this process's memory, the
// module github.com/boundhttp/boundhttp/mcpbound/redisstore in Redis, for
// a fleet of instances behind a load balancer.
//
// ServerLimits splits a result into pages before it hands it over, so a
// store holds text, never decides its layout, and every instance serves the
// same pages. Ids are 32 lowercase hexadecimal digits (128 random bits),
// minted by ServerLimits.
//
// An implementation must be safe for concurrent use, bound what it holds
// (in bytes, UTF-8 bytes of text, per result and in all), and never return
// part of a page as the page: a page it cannot read whole is an error.
type ResultStore interface {
	// Put keeps the pages of the result id (its text is the pages joined,
	// with no separator) for TTL. An error matching ErrResultTooLarge
	// means the result is bigger than the store may hold; any other error
	// (a store that cannot be reached) means it was not kept either.
	Put(ctx context.Context, id, mimeType string, pages []string) error
	// Page returns page k (0-based) of the result id, its MIME type and
	// the number of its pages. A result never kept, or removed to make
	// room, is an error matching ErrUnknownResult; one past its time to
	// live, ErrExpiredResult; k out of range, ErrNoSuchPage.
	Page(ctx context.Context, id string, k int) (text, mimeType string, pages int, err error)
	// TTL returns how long a kept result stays readable.
	TTL() time.Duration
}

// A Store is the in-memory [ResultStore]: it keeps full tool results that
// [ServerLimits] did not send whole, so that the client can read them page
// by page through resources/read. It holds at most a fixed number of bytes
// (UTF-8 bytes of text) in all, for a fixed time each; when a new result
// does not fit, the oldest go first, and a result bigger than the whole
// store is not kept. Entries live in this process's memory only: behind a
// load balancer, use a store the instances share. An expired entry's bytes
// are freed when it is read or when room is needed, always within the
// bound. A Store is safe for concurrent use; one Store may serve several
// servers.
type Store struct {
	maxBytes int64
	ttl      time.Duration
	now      func() time.Time // for tests

	mu    sync.Mutex
	bytes int64
	byID  map[string]*list.Element
	order *list.List // of *entry, oldest first; expiry order too, the TTL being one
}

// entry is one kept result.
type entry struct {
	id       string
	pages    []string
	size     int64 // bytes of all pages
	mimeType string
	expires  time.Time
}

// NewStore returns a Store that keeps at most maxBytes bytes of results in
// all, each for ttl. Zero means the default ([DefaultStoreBytes],
// [DefaultStoreTTL]); a negative argument panics, being a programming
// error.
func NewStore(maxBytes int64, ttl time.Duration) *Store {
	if maxBytes < 0 || ttl < 0 {
		panic(fmt.Sprintf("mcpbound: NewStore(%d, %v): negative size or time to live", maxBytes, ttl))
	}
	if maxBytes == 0 {
		maxBytes = DefaultStoreBytes
	}
	if ttl == 0 {
		ttl = DefaultStoreTTL
	}
	return &Store{maxBytes: maxBytes, ttl: ttl, now: time.Now, byID: map[string]*list.Element{}, order: list.New()}
}

// TTL returns how long the store keeps a result.
func (s *Store) TTL() time.Duration { return s.ttl }

// Put keeps the pages of result id; see [ResultStore]. ctx is not used:
// nothing here waits.
func (s *Store) Put(_ context.Context, id, mimeType string, pages []string) error {
	var size int64
	for _, p := range pages {
		size += int64(len(p))
	}
	if size > s.maxBytes {
		return fmt.Errorf("%w: %d bytes, more than the whole store (%d bytes)", ErrResultTooLarge, size, s.maxBytes)
	}
	e := &entry{id: id, pages: pages, size: size, mimeType: mimeType}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e.expires = now.Add(s.ttl)
	if old, ok := s.byID[id]; ok {
		s.remove(old)
	}
	// The oldest (expired ones first, expiry following age) until the new
	// one fits. Expired entries are not swept when there is room: until
	// then a read of one says that it expired, not that it is unknown.
	// Each pass removes one entry, so the loop ends within the entry
	// count.
	for f := s.order.Front(); f != nil && s.bytes+size > s.maxBytes; f = s.order.Front() {
		s.remove(f)
	}
	s.byID[e.id] = s.order.PushBack(e)
	s.bytes += size
	return nil
}

// remove drops an entry; s.mu is held.
func (s *Store) remove(el *list.Element) {
	e := s.order.Remove(el).(*entry)
	delete(s.byID, e.id)
	s.bytes -= e.size
}

// Page returns page k (0-based) of result id; see [ResultStore]. ctx is
// not used: nothing here waits.
func (s *Store) Page(_ context.Context, id string, k int) (text, mimeType string, pages int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byID[id]
	if !ok {
		return "", "", 0, ErrUnknownResult
	}
	e := el.Value.(*entry)
	if s.now().After(e.expires) {
		s.remove(el)
		return "", "", 0, fmt.Errorf("%w (results are kept for %v)", ErrExpiredResult, s.ttl)
	}
	if k < 0 || k >= len(e.pages) {
		return "", "", 0, fmt.Errorf("%w: page %d of a result that has %d pages", ErrNoSuchPage, k+1, len(e.pages))
	}
	return e.pages[k], e.mimeType, len(e.pages), nil
}

// splitPages returns text in pages of at most n characters (n > 0), each
// cut between code points; an empty text is one empty page.
func splitPages(text string, n int) []string {
	var pages []string
	c, start := 0, 0
	for i := 0; i < len(text); {
		if c == n {
			pages = append(pages, text[start:i])
			start, c = i, 0
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		c++
	}
	return append(pages, text[start:])
}

// newID returns 128 random bits in hex: a link nobody can guess.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b[:])
}
