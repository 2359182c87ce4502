package limits

import "github.com/boundhttp/boundhttp/internal/peertext"

// MaxEcho is the most bytes of a peer-chosen string (a Content-Encoding
// value) that an [Error] field keeps, and that [Echo] writes.
//
// One rule holds for peer-chosen text everywhere in this module: an Error
// field holds it raw, cut to MaxEcho bytes at a rune boundary when the
// error is made (Pointer is kept whole, for Go callers); every text built
// from an Error (its Error method, a problem document, a log record, a
// Result's rejection) writes it only through [Echo] and [EchoPointer], so
// that text is bounded and escaped whatever the peer sent.
const MaxEcho = peertext.Max

// Echo returns s as it may appear in text: at most [MaxEcho] bytes of it,
// with every byte outside printable ASCII, and the backslash, escaped
// (\xNN), followed by "...(N bytes)" when s was cut, N being its full
// length. The result is at most 4*MaxEcho+24 bytes long.
func Echo(s string) string { return peertext.Echo(s, MaxEcho) }

// EchoN is [Echo] with another bound: at most n bytes of s, escaped, and
// marked with the full length when cut. It is for peer-chosen text that
// needs more room than MaxEcho (a URL, a Content-Type) and still must be
// bounded. n <= 0 keeps nothing but the mark.
func EchoN(s string, n int) string { return peertext.Echo(s, n) }

// EchoPointer returns the JSON Pointer p as it may appear in text: array
// indices are kept, each object key is cut as [Echo] cuts a string but to 16
// bytes, and a pointer deeper than 32 tokens keeps its first 32 followed by
// "/...(N tokens)". Go callers that need the exact pointer read
// [Error.Pointer]; text meant for logs and agents uses this form, so that a
// key chosen by a peer (a prompt, a megabyte of text) never reaches it whole.
func EchoPointer(p string) string { return peertext.Pointer(p) }
