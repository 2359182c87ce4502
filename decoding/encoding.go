package decoding

import "github.com/boundhttp/boundhttp/internal/decoder"

// Supported returns the names of the codings this package decodes, in the
// order a client should prefer them in Accept-Encoding. The slice is new on
// every call.
func Supported() []string { return decoder.Supported() }

// ParseContentEncoding returns the codings of a Content-Encoding header value
// in the order they were applied. Names are lowercased and trimmed of
// optional whitespace; "x-gzip" is returned as "gzip"; "identity" and empty
// list elements are dropped. Unknown names are returned as they are, so that
// the caller can reject them. Several header lines may be joined with ",".
func ParseContentEncoding(v string) []string { return decoder.ParseContentEncoding(v) }

// IsSupported reports whether coding (as returned by [ParseContentEncoding])
// can be decoded by this package.
func IsSupported(coding string) bool { return decoder.IsSupported(coding) }
