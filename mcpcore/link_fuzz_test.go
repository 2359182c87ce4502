package mcpcore

import (
	"strings"
	"testing"
)

// FuzzResultURI: a result link a peer sends is parsed as one only if it is
// exactly what pageURI writes for its id and page (the scheme, 32
// lowercase hexadecimal digits, and ?page=K with K from 2 in decimal); any
// other text, forged or foreign, is no link. The seed corpus is in
// testdata/fuzz/FuzzResultURI.
func FuzzResultURI(f *testing.F) {
	id := strings.Repeat("0123456789abcdef", 2)
	for _, s := range []string{
		ResultURIPrefix + id, ResultURIPrefix + id + "?page=2", ResultURIPrefix + id + "?page=1",
		ResultURIPrefix + id + "?page=02", ResultURIPrefix + strings.ToUpper(id), id, id + "?page=3",
		"https://example.com/" + id, ResultURIPrefix + id + "?page=-2", ResultURIPrefix + id + "?page=2?page=3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		id, page, ok := parseResultURI(uri)
		if !ok {
			return
		}
		if !isResultURI(uri) || !isHexID(id) || page < 0 {
			t.Fatalf("parseResultURI(%q) = %q, %d, true: not a link of the scheme", uri, id, page)
		}
		if got := pageURI(id, page); got != uri {
			t.Fatalf("parseResultURI(%q) = %q, %d; pageURI writes %q", uri, id, page, got)
		}
	})
}
