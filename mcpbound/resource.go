package mcpbound

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// read answers resources/read for uri: one page, with _meta.next naming the
// following page unless it is the last. An unknown or expired link is a
// resource-not-found error whose message says which.
func (s *Store) read(uri string) (*mcp.ReadResourceResult, error) {
	id, k, ok := parseResultURI(uri)
	if !ok {
		return nil, notFound(uri, ErrUnknownResult.Error())
	}
	text, mime, pages, err := s.page(id, k)
	if err != nil {
		return nil, notFound(uri, err.Error()+"; call the tool again")
	}
	res := &mcp.ReadResourceResult{
		Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}},
	}
	res.CacheScope = "private" // TTLMs 0: stale at once, never served from a cache
	meta := mcp.Meta{"page": k + 1, "pages": pages}
	if k+1 < pages {
		meta[NextKey] = pageURI(id, k+1)
	}
	res.Meta = meta
	return res, nil
}

// notFound is the JSON-RPC resource-not-found error (mcp.CodeResourceNotFound)
// with a message that says why.
func notFound(uri, why string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: "Resource not found: " + why, Data: data}
}
