// Package peertext is the one owner of text a peer chose (a Content-Encoding
// value, a JSON object key, a header, an error text that quotes the peer)
// on its way into errors, problem documents, log records and results.
//
// The rule is: a [limits.Error] field holds the peer's text raw, cut to
// [Max] bytes at a rune boundary by [Cut] when it is stored; every renderer
// (Error's text, a problem document, a log record, a Result's rejection)
// escapes it when it writes it, through [Echo] and [Pointer] (exported as
// limits.Echo, limits.EchoN and limits.EchoPointer). Nothing is stored
// escaped, so nothing is escaped twice, and no renderer has to guess.
package peertext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Max is the most bytes of a peer-chosen string that an error field keeps
// and that Echo writes (limits.MaxEcho).
const Max = 64

// maxKey is the most bytes of one object key that Pointer keeps.
const maxKey = 16

// maxTokens is the most reference tokens Pointer keeps.
const maxTokens = 32

// Cut returns s cut to at most Max bytes, raw, for an error field. The cut
// falls on a rune boundary, so valid UTF-8 stays valid; in invalid UTF-8 it
// backs off at most utf8.UTFMax-1 bytes looking for one. A string of at most
// Max bytes is returned as it is.
func Cut(s string) string {
	if len(s) <= Max {
		return s
	}
	for i := Max; i > Max-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:Max]
}

// Echo returns s as it may appear in text: at most n bytes of it (n <= 0:
// none), with every byte outside printable ASCII, and the backslash,
// escaped (\xNN), followed by "...(N bytes)" when s was cut, N being its
// full length. The result is at most 4*n+24 bytes long.
func Echo(s string, n int) string {
	n = max(n, 0)
	cut := s
	if len(cut) > n {
		cut = cut[:n]
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
	if len(s) > n {
		b.WriteString("...(")
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteString(" bytes)")
	}
	return b.String()
}

// Pointer returns the JSON Pointer p as it may appear in text: array
// indices are kept, each object key is written as Echo writes it but cut to
// 16 bytes, and a pointer deeper than 32 tokens keeps its first 32 followed
// by "/...(N tokens)".
func Pointer(p string) string {
	if p == "" {
		return ""
	}
	tokens := strings.Split(p[1:], "/")
	var b strings.Builder
	for i, t := range tokens {
		if i == maxTokens {
			b.WriteString("/...(")
			b.WriteString(strconv.Itoa(len(tokens)))
			b.WriteString(" tokens)")
			break
		}
		b.WriteByte('/')
		b.WriteString(Echo(t, maxKey))
	}
	return b.String()
}
