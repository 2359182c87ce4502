package mcpcore

import "unicode/utf8"

// Characters, in this package, are Unicode code points: what
// utf8.RuneCountInString counts. Bytes are UTF-8 bytes. A cut is always made
// between two code points, never inside a UTF-8 sequence (an invalid byte
// counts as one character, as utf8 decoding treats it).

// chars returns the number of characters (code points) of s.
func chars(s string) int { return utf8.RuneCountInString(s) }

// head returns the first n characters of s (all of s if it has fewer).
func head(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// tail returns the last n characters of s (all of s if it has fewer).
func tail(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := len(s)
	for i > 0 && n > 0 {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
		n--
	}
	return s[i:]
}

// markerPrefix is how every cut this package makes begins its marker:
// "[truncated: showing N of M characters", N and M plain decimal integers.
const markerPrefix = "[truncated: showing "
