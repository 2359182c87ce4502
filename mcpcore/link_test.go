package mcpcore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReadErrorEchoesAPeersURIBounded: a resources/read of a URI in the
// links' scheme that a peer made a megabyte long (malformed, or a well
// formed id with a huge page number and a control byte) is refused with
// the URI echoed to at most 256 bytes, escaped, with its length; a link's
// own URI comes back as it is. Found: the whole URI went back into the
// error's data. Sabotage: ReadError{URI: uri} in notFound -> this test
// failed.
func TestReadErrorEchoesAPeersURIBounded(t *testing.T) {
	s := newServer(t, ServerLimits{MaxResultChars: 1000, Store: NewStore(1<<20, time.Minute)})
	id := strings.Repeat("f", 32)
	for _, uri := range []string{
		ResultURIPrefix + strings.Repeat("a", 1<<20),
		ResultURIPrefix + id + "?page=" + strings.Repeat("9", 1<<20),
		ResultURIPrefix + id + "?page=2\x00" + strings.Repeat("é", 1<<19),
	} {
		_, err := s.Read(context.Background(), uri)
		re, ok := err.(*ReadError)
		if !ok || !re.NotFound {
			t.Fatalf("read of a %d-byte URI: %v, want a not-found ReadError", len(uri), err)
		}
		if len(re.URI) > 4*maxEchoURI+32 || len(re.Message) > 4*maxStoreError+200 || strings.ContainsRune(re.URI, 0) {
			t.Errorf("read of a %d-byte URI: echoed %d bytes of URI, %d of message: %q", len(uri), len(re.URI), len(re.Message), clip(re.URI))
		}
	}
	_, err := s.Read(context.Background(), ResultURIPrefix+id+"?page=2")
	if re, ok := err.(*ReadError); !ok || re.URI != ResultURIPrefix+id+"?page=2" {
		t.Errorf("a link's own URI: %v, want it echoed as it is", err)
	}
}

// TestFollowLinkEchoesAServersURIBounded: a server that names a next page
// a megabyte long and then sends more than the caller's bound gets an
// error that quotes that URI to at most 256 bytes. Found: the error quoted
// it whole. Sabotage: uri instead of its echo in the error -> this test
// failed.
func TestFollowLinkEchoesAServersURIBounded(t *testing.T) {
	long := ResultURIPrefix + strings.Repeat("b", 1<<20)
	_, err := FollowLink(context.Background(), ResultURIPrefix+"x", 10, 100, func(_ context.Context, uri string) ([]string, string, error) {
		return []string{strings.Repeat("d", 60)}, long, nil
	})
	if err == nil || len(err.Error()) > 4*maxEchoURI+100 || !strings.Contains(err.Error(), "more than 100 characters") {
		t.Errorf("err = %.300v (%d bytes), want a bounded error naming the bound", err, len(errString(err)))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestFollowLinkBoundsAServersErrorText: a server that answers a page with
// an error whose message is a megabyte long reaches the caller bounded and
// escaped, still matched by errors.As. Found: the message came back whole.
// Sabotage: returning read's error as it is -> this test failed.
func TestFollowLinkBoundsAServersErrorText(t *testing.T) {
	sent := &ReadError{Message: strings.Repeat("m", 1<<20) + "\x1b[2J"}
	_, err := FollowLink(context.Background(), ResultURIPrefix+"x", 10, 100, func(context.Context, string) ([]string, string, error) {
		return nil, "", sent
	})
	var re *ReadError
	if err == nil || len(err.Error()) > 4*maxStoreError+32 || !errors.As(err, &re) || re != sent {
		t.Errorf("err = %.300v (%d bytes), want the server's error, bounded", err, len(errString(err)))
	}
}

// TestReadOfAPageTheReaderNamedSaysWhichPageIsFirst: a reader (a model
// that guessed) asking for ?page=1, ?page=0, ?page=-1, ?page=x, two page
// parameters or ?page=02 of a link that exists is told that the page is
// malformed and where the first page is, not that the result was never
// issued or evicted (which sends it to call the tool again); the next
// pages as the notes name them still read. Sabotage: dropping the
// malformed-page answer -> this test fails ("unknown result link").
func TestReadOfAPageTheReaderNamedSaysWhichPageIsFirst(t *testing.T) {
	s := newServer(t, ServerLimits{MaxResultChars: 1000, Store: NewStore(1<<20, time.Minute)})
	_, link := linked(t, s, mixed(5000))
	for _, q := range []string{"?page=1", "?page=0", "?page=-1", "?page=x", "?page=2&page=3", "?page=2?page=3", "?page=02", "?page=", "?p=2"} {
		_, err := s.Read(context.Background(), link.URI+q)
		re, ok := err.(*ReadError)
		if !ok || !re.NotFound || !strings.Contains(re.Message, "malformed page") || !strings.Contains(re.Message, link.URI+" (no ?page=)") ||
			strings.Contains(re.Message, "never issued") {
			t.Errorf("read %s: %v, want a malformed page naming the first", q, err)
		}
	}
	for _, q := range []string{"", "?page=2", "?page=3"} {
		if _, err := s.Read(context.Background(), link.URI+q); err != nil {
			t.Errorf("read %s: %v", q, err)
		}
	}
	if _, err := s.Read(context.Background(), ResultURIPrefix+strings.Repeat("A", 32)+"?page=1"); err == nil || !strings.Contains(err.Error(), "unknown result link") {
		t.Errorf("an id that is no id: %v, want unknown", err)
	}
}
