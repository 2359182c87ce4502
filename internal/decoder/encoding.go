package decoder

import "strings"

// Supported returns the names of the codings this package decodes, in the
// order a client should prefer them in Accept-Encoding. The slice is new on
// every call.
func Supported() []string { return []string{"zstd", "br", "gzip", "deflate"} }

// ParseContentEncoding returns the codings of a Content-Encoding header value
// in the order they were applied. Names are lowercased and trimmed of
// optional whitespace; "x-gzip" is returned as "gzip"; "identity" and empty
// list elements are dropped. Unknown names are returned as they are, so that
// the caller can reject them. Several header lines may be joined with ",".
func ParseContentEncoding(v string) []string { return appendCodings(nil, v) }

// AppendCodings appends the codings of the Content-Encoding value v to
// codings, as [ParseContentEncoding] returns them: into a buffer on the
// caller's stack, parsing a header of a coding or two allocates nothing.
func AppendCodings(codings []string, v string) []string { return appendCodings(codings, v) }

// appendCodings appends the codings of v to codings, as
// [ParseContentEncoding] returns them.
func appendCodings(codings []string, v string) []string {
	for part := range strings.SplitSeq(v, ",") {
		c := strings.ToLower(strings.Trim(part, " \t"))
		switch c {
		case "", "identity":
			continue
		case "x-gzip":
			c = "gzip"
		}
		codings = append(codings, c)
	}
	return codings
}

// IsSupported reports whether coding (as returned by [ParseContentEncoding])
// can be decoded by this package.
func IsSupported(coding string) bool {
	switch coding {
	case "gzip", "deflate", "br", "zstd":
		return true
	}
	return false
}
