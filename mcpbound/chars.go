package mcpbound

import (
	"strconv"
	"unicode/utf8"
)

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

// marker returns the marker for a text of which shown of total characters
// are kept; how tells the reader how to get the rest.
func marker(shown, total int, how string) string {
	return markerPrefix + strconv.Itoa(shown) + " of " + strconv.Itoa(total) + " characters; " + how + "]"
}

// cutToFit returns the head of text, a newline and the marker, with as many
// characters of text as fit in limit characters together with the newline
// and the marker, so that the whole is at most limit characters whenever the
// marker alone fits. total is chars(text), passed in to avoid a recount.
func cutToFit(text string, total, limit int, how string) string {
	n := shownFit(total, limit, how)
	return head(text, n) + "\n" + marker(n, total, how)
}

// shownFit returns the most characters n <= total such that n, a newline
// and marker(n, total, how) fit in limit characters (0 if none do).
func shownFit(total, limit int, how string) int {
	fits := func(n int) bool { return n+1+chars(marker(n, total, how)) <= limit }
	// The marker's length depends on the digits of n, which the digits of
	// total bound: lo fits, and the best is at most a few digits above it.
	lo := min(total, max(0, limit-1-chars(marker(total, total, how))))
	best := lo
	for n := lo + 1; n <= min(total, lo+32); n++ {
		if fits(n) {
			best = n
		}
	}
	return best
}
