package limits

import (
	"strconv"
	"strings"
)

// MaxEcho is the most bytes of a peer-chosen string (a Content-Encoding
// value, a JSON object key) that [Echo] keeps. Text built from an [Error]
// (its Error method, a problem document, a log record, a result for an
// agent) holds peer-chosen strings only through Echo and [EchoPointer], so
// it is bounded whatever the peer sent.
const MaxEcho = 64

// maxEchoKey is the most bytes of one object key that [EchoPointer] keeps.
const maxEchoKey = 16

// maxEchoTokens is the most reference tokens [EchoPointer] keeps.
const maxEchoTokens = 32

// Echo returns s as it may appear in text: at most [MaxEcho] bytes of it,
// with every byte outside printable ASCII, and the backslash, escaped
// (\xNN), followed by "...(N bytes)" when s was cut, N being its full
// length. The result is at most 4*MaxEcho+24 bytes long.
func Echo(s string) string { return EchoN(s, MaxEcho) }

// EchoN is [Echo] with another bound: at most n bytes of s, escaped, and
// marked with the full length when cut. It is for peer-chosen text that
// needs more room than MaxEcho (a URL, a Content-Type) and still must be
// bounded. n <= 0 keeps nothing but the mark.
func EchoN(s string, n int) string { return echo(s, max(n, 0)) }

// EchoPointer returns the JSON Pointer p as it may appear in text: array
// indices are kept, each object key is cut as [Echo] cuts a string but to 16
// bytes, and a pointer deeper than 32 tokens keeps its first 32 followed by
// "/...(N tokens)". Go callers that need the exact pointer read
// [Error.Pointer]; text meant for logs and agents uses this form, so that a
// key chosen by a peer (a prompt, a megabyte of text) never reaches it whole.
func EchoPointer(p string) string {
	if p == "" {
		return ""
	}
	tokens := strings.Split(p[1:], "/")
	var b strings.Builder
	for i, t := range tokens {
		if i == maxEchoTokens {
			b.WriteString("/...(")
			b.WriteString(strconv.Itoa(len(tokens)))
			b.WriteString(" tokens)")
			break
		}
		b.WriteByte('/')
		b.WriteString(echo(t, maxEchoKey))
	}
	return b.String()
}

func echo(s string, max int) string {
	cut := s
	if len(cut) > max {
		cut = cut[:max]
	}
	var b strings.Builder
	for i := 0; i < len(cut); i++ {
		c := cut[i]
		if c >= 0x20 && c < 0x7f && c != '\\' {
			b.WriteByte(c)
			continue
		}
		b.WriteString(`\x`)
		b.WriteByte("0123456789abcdef"[c>>4])
		b.WriteByte("0123456789abcdef"[c&15])
	}
	if len(s) > max {
		b.WriteString("...(")
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteString(" bytes)")
	}
	return b.String()
}
