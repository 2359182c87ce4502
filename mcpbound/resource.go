package mcpbound

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp/limits"
)

// ResultURIPrefix begins the URI of every result a [Store] keeps:
// "mcpbound://result/" followed by 32 random hexadecimal digits (128 bits,
// so that links cannot be guessed). That URI reads the first page; the
// following pages add "?page=K" (K from 2), as each page's _meta.next says.
const ResultURIPrefix = "mcpbound://result/"

// NextKey is the member of a page's result _meta that holds the URI of the
// following page; the last page has none.
const NextKey = "next"

// isResultURI reports whether uri is in this package's scheme.
func isResultURI(uri string) bool { return strings.HasPrefix(uri, ResultURIPrefix) }

// parseResultURI returns the id and the 0-based page of uri.
func parseResultURI(uri string) (id string, page int, ok bool) {
	rest := strings.TrimPrefix(uri, ResultURIPrefix)
	id, q, hasQ := strings.Cut(rest, "?page=")
	if len(id) != 32 {
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

// readResult answers resources/read for uri from store: one page and its
// navigation note, with _meta.next naming the following page unless it is
// the last. An unknown or expired link is a resource-not-found error whose
// message says which; a store that fails otherwise (unreachable) is an
// internal error that says so.
func readResult(ctx context.Context, store ResultStore, uri string) (*mcp.ReadResourceResult, error) {
	id, k, ok := parseResultURI(uri)
	if !ok {
		return nil, notFound(uri, ErrUnknownResult.Error())
	}
	text, mime, pages, err := store.Page(ctx, id, k)
	switch {
	case errors.Is(err, ErrUnknownResult) || errors.Is(err, ErrExpiredResult) || errors.Is(err, ErrNoSuchPage):
		return nil, notFound(uri, limits.EchoN(err.Error(), maxStoreError)+"; call the tool again")
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "the result store failed: " + limits.EchoN(err.Error(), maxStoreError) + "; try again later, or call the tool again"}
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: uri, MIMEType: mime, Text: text},
		{URI: uri, MIMEType: "text/plain", Text: pageNote(id, k, pages), Meta: mcp.Meta{NavigationKey: true}},
	}}
	res.CacheScope = "private" // TTLMs 0: stale at once, never served from a cache
	meta := mcp.Meta{"page": k + 1, "pages": pages}
	if k+1 < pages {
		meta[NextKey] = pageURI(id, k+1)
	}
	res.Meta = meta
	return res, nil
}

// maxStoreError bounds the characters of a store's error text that reach a
// client.
const maxStoreError = 300

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

// notFound is the JSON-RPC resource-not-found error with a message that says
// why: code -32602 (invalid params), the code the MCP specification gives a
// resource that does not exist, with the URI in its data as {"uri": ...}. The
// code is the constant, not the SDK's deprecated variable, so the SDK's
// MCPGODEBUG switch back to -32002 does not change what this server answers.
func notFound(uri, why string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Resource not found: " + why, Data: data}
}
