package mcpcore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/boundhttp/boundhttp/limits"
)

// ResultURIPrefix begins the URI of every result a [Store] keeps:
// "mcpbound://result/" followed by 32 random hexadecimal digits (128 bits,
// so that links cannot be guessed). That URI reads the first page; the
// following pages add "?page=K" (K from 2), as each page's _meta.next says.
const ResultURIPrefix = "mcpbound://result/"

// NextKey is the member of a page's _meta that holds the URI of the
// following page: of the resources/read result's _meta where the SDK lets
// the server set it (the official Go SDK does, mcp-go does not), and of the
// navigation note's _meta always. The last page has none.
const NextKey = "next"

// isResultURI reports whether uri is in this package's scheme.
func isResultURI(uri string) bool { return strings.HasPrefix(uri, ResultURIPrefix) }

// parseResultURI returns the id and the 0-based page of uri, a URI of this
// package's scheme as pageURI writes it, and reports whether it is one.
func parseResultURI(uri string) (id string, page int, ok bool) {
	rest, scheme := strings.CutPrefix(uri, ResultURIPrefix)
	id, q, hasQ := strings.Cut(rest, "?page=")
	if !scheme || !isHexID(id) {
		return "", 0, false
	}
	if !hasQ {
		return id, 0, true
	}
	k, err := strconv.Atoi(q)
	if err != nil || k < 2 || strconv.Itoa(k) != q {
		return "", 0, false
	}
	return id, k - 1, true
}

// isHexID reports whether id is an id as newID makes them: 32 lowercase
// hexadecimal digits.
func isHexID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// pageURI returns the URI of page k (0-based) of result id.
func pageURI(id string, k int) string {
	if k == 0 {
		return ResultURIPrefix + id
	}
	return ResultURIPrefix + id + "?page=" + strconv.Itoa(k+1)
}

// NavigationKey is the member of a resource contents item's _meta that
// marks the navigation note of a page (its value is true). A page of a kept
// result has two contents items: the page's data (the result's text, to be
// joined with the other pages' data), then the note, a text a model can
// read, that names the page, the number of pages and, on every page but the
// last, the next page's URI. [ReadLink] joins the data alone.
const NavigationKey = "mcpbound/navigation"

// A ResultPage is what resources/read answers for a page of a kept result:
// two contents items, the page's data (URI, MIMEType, Data) then its
// navigation note (URI, "text/plain", Note, with _meta
// {NavigationKey: true, NextKey: Next} where Next is not empty), and the
// result's _meta {"page": Page, "pages": Pages, NextKey: Next} where the
// SDK lets a resource handler set it. The result is private to the
// session and stale at once (never served from a cache).
type ResultPage struct {
	URI, MIMEType string
	Data          string // the page's data: the kept text, to join with the other pages'
	Note          string // the navigation note, a text a model reads
	Page, Pages   int    // 1-based page number, and the number of pages
	Next          string // the next page's URI; empty on the last
}

// A ReadError is why a link could not be read: NotFound for a link never
// issued, evicted, expired, or a page out of range (the JSON-RPC error
// -32602, invalid params, the MCP specification's resource-not-found, with
// the URI in its data as {"uri": ...}); otherwise the store failed (the
// internal error -32603). URI is the URI the client asked for, as
// [limits.EchoN] writes it to at most maxEchoURI (256) bytes: a link of
// this package is under 80 printable bytes and stays as it is, and a URI
// a peer made a megabyte long does not come back whole. Message is the
// error's message, with the reason bounded and escaped.
type ReadError struct {
	URI      string
	NotFound bool
	Message  string
}

func (e *ReadError) Error() string { return e.Message }

// Read returns page uri of a result kept by this Server's store, or a
// [*ReadError]: an unknown, expired or malformed link, or a store that
// cannot be reached, says which.
func (s *Server) Read(ctx context.Context, uri string) (*ResultPage, error) {
	id, k, ok := parseResultURI(uri)
	if base, _, q := strings.Cut(uri, "?"); !ok && q && s.store != nil && isHexID(strings.TrimPrefix(base, ResultURIPrefix)) {
		// A page a reader named itself (?page=1, ?page=0, two pages): the
		// result may be there, so it is not called gone.
		return nil, notFound(uri, "malformed page in the link: the first page is "+base+
			" (no ?page=), the next ones add ?page=K, K from 2, as each page's note names them")
	}
	if !ok || s.store == nil {
		return nil, notFound(uri, ErrUnknownResult.Error())
	}
	text, mime, pages, err := s.store.Page(ctx, id, k)
	switch {
	case errors.Is(err, ErrUnknownResult) || errors.Is(err, ErrExpiredResult) || errors.Is(err, ErrNoSuchPage):
		return nil, notFound(uri, limits.EchoN(err.Error(), maxStoreError)+"; call the tool again")
	case err != nil:
		return nil, &ReadError{URI: limits.EchoN(uri, maxEchoURI),
			Message: "the result store failed: " + limits.EchoN(err.Error(), maxStoreError) + "; try again later, or call the tool again"}
	}
	p := &ResultPage{URI: uri, MIMEType: mime, Data: text, Note: pageNote(id, k, pages), Page: k + 1, Pages: pages}
	if k+1 < pages {
		p.Next = pageURI(id, k+1)
	}
	return p, nil
}

// FollowLink reads the kept result uri through read (one resources/read)
// and follows each page's next URI to the last page, returning the pages'
// data joined (the navigation notes left out). It reads at most maxPages
// pages and at most maxChars characters in all, and fails rather than
// return a prefix as the whole: a loop of links or a longer result is an
// error. Both bounds must be positive. read returns a page's data items
// and the next page's URI (empty on the last); an error of read is
// returned with its text bounded and escaped (errors.Is and As see it).
func FollowLink(ctx context.Context, uri string, maxPages, maxChars int, read func(ctx context.Context, uri string) (data []string, next string, err error)) (string, error) {
	if maxPages <= 0 || maxChars <= 0 {
		return "", fmt.Errorf("mcpbound: ReadLink(%d pages, %d characters): bounds must be positive", maxPages, maxChars)
	}
	var b strings.Builder
	n := 0
	for page := 1; page <= maxPages; page++ {
		data, next, err := read(ctx, uri)
		if err != nil {
			return "", peerError{err}
		}
		for _, d := range data {
			n += chars(d)
			if n > maxChars {
				return "", fmt.Errorf("mcpbound: resource %s: more than %d characters", limits.EchoN(uri, maxEchoURI), maxChars)
			}
			b.WriteString(d)
		}
		if next == "" {
			return b.String(), nil
		}
		uri = next
	}
	return "", fmt.Errorf("mcpbound: resource has more than %d pages", maxPages)
}

// maxStoreError bounds the characters of a store's error text that reach a
// client.
const maxStoreError = 300

// peerError is an error whose text the other side chose (a JSON-RPC
// error's message): its Error is bounded and escaped; errors.Is and As see
// the error itself.
type peerError struct{ err error }

func (e peerError) Error() string { return limits.EchoN(e.err.Error(), maxStoreError) }
func (e peerError) Unwrap() error { return e.err }

// maxEchoURI bounds the bytes of a URI, chosen by the other side, that an
// error echoes: a link of this package is under 80 bytes.
const maxEchoURI = 256

// pageNote is the navigation note of page k (0-based) of pages.
func pageNote(id string, k, pages int) string {
	if k+1 >= pages {
		return "[page " + strconv.Itoa(k+1) + " of " + strconv.Itoa(pages) + " of a tool result, the last: the result is complete]"
	}
	return "[page " + strconv.Itoa(k+1) + " of " + strconv.Itoa(pages) + " of a tool result; the next page is the resource " +
		pageURI(id, k+1) + ", read it with resources/read]"
}

// noteRoom returns the most characters a page's note can take for a
// result of total characters: its page numbers have at most as many digits
// as total.
func noteRoom(total int) int {
	n := 1
	for v := total; v >= 10; v /= 10 {
		n = n*10 + 1 // 1, 11, 111, ...: a number of the same digits
	}
	n *= 9 // 9, 99, 999, ...
	return max(chars(pageNote(strings.Repeat("0", 32), n-1, n)), chars(pageNote(strings.Repeat("0", 32), n-2, n)))
}

// notFound is the resource-not-found error with a message that says why.
func notFound(uri, why string) error {
	return &ReadError{URI: limits.EchoN(uri, maxEchoURI), NotFound: true, Message: "Resource not found: " + why}
}
