package mcpcore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// newServer returns the Server of l.
func newServer(t *testing.T, l ServerLimits) *Server {
	t.Helper()
	s, err := NewServer(l)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// linked caps a result of one text block s, returning the replacement and
// its link (nil for none).
func linked(t *testing.T, s *Server, text string) (*Replacement, *Link) {
	t.Helper()
	rep := s.Cap(context.Background(), Result{Content: []Content{{Kind: Text, Text: text}}})
	if rep == nil {
		t.Fatalf("a result of %d characters was not cut", chars(text))
	}
	return rep, rep.Link
}

// readPage reads uri from s.
func readPage(s *Server, uri string) (*ResultPage, error) { return s.Read(context.Background(), uri) }

// TestStoreExpiry: a link read after the time to live fails, saying so.
// Sabotage: a TTL check of After(expires + ttl) keeps it readable.
func TestStoreExpiry(t *testing.T) {
	store := NewStore(1<<20, time.Minute)
	now := time.Now()
	store.now = func() time.Time { return now }
	srv := newServer(t, ServerLimits{MaxResultChars: 1000, Store: store})
	_, link := linked(t, srv, mixed(2000))
	now = now.Add(time.Minute)
	if _, err := readPage(srv, link.URI); err != nil {
		t.Errorf("read at the time to live: %v", err)
	}
	now = now.Add(time.Nanosecond)
	_, err := readPage(srv, link.URI)
	if err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("read after the time to live: %v, want an error saying it expired", err)
	}
}

// TestStoreEviction: when the store is full the oldest results go; a result
// bigger than the store is cut with the marker instead. Sabotage: a store
// that never evicts fails the size check.
func TestStoreEviction(t *testing.T) {
	store := NewStore(5000, time.Minute)
	srv := newServer(t, ServerLimits{MaxResultChars: 1000, Store: store})
	var links []string
	for i := 0; i < 4; i++ {
		_, l := linked(t, srv, strings.Repeat(string(rune('a'+i)), 2000))
		links = append(links, l.URI)
	}
	if store.bytes > 5000 {
		t.Errorf("store holds %d bytes, cap 5000", store.bytes)
	}
	if _, err := readPage(srv, links[0]); err == nil {
		t.Error("the oldest result survived a full store")
	}
	if _, err := readPage(srv, links[3]); err != nil {
		t.Errorf("the newest result: %v", err)
	}
	out, l := linked(t, srv, strings.Repeat("z", 5001))
	if l != nil || !strings.Contains(out.Text, "too large to keep") {
		t.Errorf("a result bigger than the store: link %v, text %q", l, clip(out.Text))
	}
	if _, m := parseMarker(t, out.Text); m != 5001 {
		t.Errorf("M = %d", m)
	}
}

// TestStoreExpiredThenNewResult: a link that expired says "expired" even
// after a newer result was kept. Found: put swept expired entries away
// first, so the expired link then read as "unknown result link (never
// issued, or evicted to make room for newer results)", in a store with
// room to spare.
func TestStoreExpiredThenNewResult(t *testing.T) {
	store := NewStore(1<<20, time.Minute)
	now := time.Now()
	store.now = func() time.Time { return now }
	srv := newServer(t, ServerLimits{MaxResultChars: 1000, Store: store})
	_, old := linked(t, srv, mixed(2000))
	now = now.Add(2 * time.Minute)
	if _, l := linked(t, srv, mixed(2000)); l == nil {
		t.Fatal("no link for the newer result")
	}
	_, err := readPage(srv, old.URI)
	if err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("read of an expired link after a newer result: %v, want an error saying it expired", err)
	}
	if store.bytes > 1<<20 {
		t.Errorf("store holds %d bytes", store.bytes)
	}
}

// TestStoreConcurrent: results from many sessions at once, and reads of
// their links (and of guessed, overflowing and malformed page URIs) racing
// eviction, keep the store within its bytes; every read returns either
// the exact page or a clear error. Run with -race.
func TestStoreConcurrent(t *testing.T) {
	store := NewStore(20000, time.Minute)
	srv := newServer(t, ServerLimits{MaxResultChars: 1000, Store: store})
	done := make(chan string, 8)
	for g := 0; g < 8; g++ {
		go func() {
			for i := 0; i < 20; i++ {
				s := strings.Repeat(string(rune('a'+g)), 2500+i)
				// Not linked(t, ...): t.Fatalf is for the test's goroutine
				// (off it, a failure hangs the test instead of failing it).
				var uri string
				if rep := srv.Cap(context.Background(), Result{Content: []Content{{Kind: Text, Text: s}}}); rep != nil && rep.Link != nil {
					uri = rep.Link.URI
				}
				if uri == "" {
					done <- "no link"
					return
				}
				p := ServerLimits{MaxResultChars: 1000}.PageChars(len(s))
				for k, u := range []string{uri, uri + "?page=2", uri + "?page=3"} {
					page, err := readPage(srv, u)
					switch {
					case err != nil && !strings.Contains(err.Error(), "unknown"):
						done <- "read " + u + ": " + err.Error()
						return
					case err == nil && page.Data != s[p*k:min(len(s), p*(k+1))]:
						done <- "wrong page " + u
						return
					}
				}
				for _, u := range []string{uri + "?page=9223372036854775807", uri + "?page=99999999999999999999", uri + "?page=0", uri + "?page=1", uri + "?page=-2", uri + "?page=+2", uri + "?page=02", ResultURIPrefix + strings.Repeat("f", 32), uri + "x", ResultURIPrefix} {
					if _, err := readPage(srv, u); err == nil || !strings.Contains(err.Error(), "Resource not found") {
						done <- "read " + u + ": " + fmt.Sprint(err)
						return
					}
				}
			}
			done <- ""
		}()
	}
	for g := 0; g < 8; g++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.bytes > 20000 || store.order.Len() != len(store.byID) {
		t.Errorf("store holds %d bytes in %d entries (%d ids), cap 20000", store.bytes, store.order.Len(), len(store.byID))
	}
}
