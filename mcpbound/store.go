package mcpbound

import (
	"container/list"
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

// Errors of a read from a [Store], matched with errors.Is.
var (
	ErrUnknownResult = errors.New("mcpbound: unknown result link (never issued, or evicted to make room for newer results)")
	ErrExpiredResult = errors.New("mcpbound: result link expired")
)

// A Store keeps full tool results that [ServerLimits] did not send whole,
// so that the client can read them page by page through resources/read. It
// holds at most a fixed number of bytes (UTF-8 bytes of text) in all, for a
// fixed time each; when a new result does not fit, the oldest go first, and
// a result bigger than the whole store is not kept. Entries live in memory
// only; an expired entry's bytes are freed when it is read or when room is
// needed, always within the bound. A Store is safe for concurrent use; one Store may serve several
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
	text     string
	mimeType string
	pages    []int // byte offset of each page's start in text
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

// put keeps text, split into pages of at most pageChars characters, and
// returns its id; ok is false if text is bigger than the whole store.
func (s *Store) put(text, mimeType string, pageChars int) (id string, ok bool) {
	size := int64(len(text))
	if size > s.maxBytes {
		return "", false
	}
	e := &entry{id: newID(), text: text, mimeType: mimeType, pages: pageStarts(text, pageChars)}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	e.expires = now.Add(s.ttl)
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
	return e.id, true
}

// remove drops an entry; s.mu is held.
func (s *Store) remove(el *list.Element) {
	e := s.order.Remove(el).(*entry)
	delete(s.byID, e.id)
	s.bytes -= int64(len(e.text))
}

// page returns page k (0-based) of the result id and the number of pages.
func (s *Store) page(id string, k int) (text, mimeType string, pages int, err error) {
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
		return "", "", 0, fmt.Errorf("mcpbound: page %d of a result that has %d pages", k+1, len(e.pages))
	}
	end := len(e.text)
	if k+1 < len(e.pages) {
		end = e.pages[k+1]
	}
	return e.text[e.pages[k]:end], e.mimeType, len(e.pages), nil
}

// pageStarts returns the byte offsets at which the pages of at most n
// characters of text begin; an empty text has one empty page.
func pageStarts(text string, n int) []int {
	starts := []int{0}
	c := 0
	for i := 0; i < len(text); {
		if c == n {
			starts = append(starts, i)
			c = 0
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		c++
	}
	return starts
}

// newID returns 128 random bits in hex: a link nobody can guess.
func newID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b[:])
}
