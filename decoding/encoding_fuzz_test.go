package decoding_test

import (
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/decoding"
)

// FuzzParseContentEncoding: whatever a peer sends as Content-Encoding, the
// codings come back as names, in lower case, trimmed, never empty, never
// identity, never holding a list separator, x-gzip as gzip, no more of
// them than the list has elements; nothing panics.
func FuzzParseContentEncoding(f *testing.F) {
	for _, s := range []string{"gzip", "GZIP, br", " x-gzip ,identity,, zstd ", ",,,", "", "gzip,\tdeflate", "br;q=1", "\x00", "ä, Gzip"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		codings := decoding.ParseContentEncoding(v)
		if len(codings) > strings.Count(v, ",")+1 {
			t.Fatalf("%q: %d codings from %d elements", v, len(codings), strings.Count(v, ",")+1)
		}
		for _, c := range codings {
			if c == "" || c == "identity" || c == "x-gzip" || strings.ContainsRune(c, ',') || strings.Trim(c, " \t") != c {
				t.Fatalf("%q: coding %q", v, c)
			}
			for i := range len(c) {
				if 'A' <= c[i] && c[i] <= 'Z' {
					t.Fatalf("%q: coding %q not in lower case", v, c)
				}
			}
		}
	})
}
