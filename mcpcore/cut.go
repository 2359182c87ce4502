package mcpcore

import (
	"slices"
	"strconv"
)

// This file holds the cut itself, free of any MCP SDK type: a text, where
// its parts were joined, and how much of each end a cut keeps.

// measured is a text to cut: the parts of a result joined by "\n", and the
// character offsets of the newlines that join them. Those joins are not the
// result's characters: M in a marker and the comparison with a cap count
// the parts alone (two blocks of 12,000 characters are 24,000 characters).
type measured struct {
	text   string
	joined int   // chars(text), joins included
	joins  []int // character offsets of the joining newlines, ascending
}

// measure joins parts with "\n" and records where.
func measure(parts []string) measured {
	var m measured
	var b []byte
	for i, p := range parts {
		if i > 0 {
			m.joins = append(m.joins, m.joined)
			b = append(b, '\n')
			m.joined++
		}
		b = append(b, p...)
		m.joined += chars(p)
	}
	m.text = string(b)
	return m
}

// total returns the characters of the result: the parts without the joins.
func (m measured) total() int { return m.joined - len(m.joins) }

// shown returns the result's characters among the first n and the last l
// characters of m.text (joins not counted).
func (m measured) shown(n, l int) int {
	inHead, _ := slices.BinarySearch(m.joins, n)             // joins at offsets < n
	inTail := len(m.joins) - sortSearch(m.joins, m.joined-l) // joins at offsets >= joined-l
	return n - inHead + l - inTail
}

// sortSearch returns the index of the first offset >= x.
func sortSearch(a []int, x int) int {
	i, _ := slices.BinarySearch(a, x)
	return i
}

// marker returns the marker of a cut that shows shown of total characters;
// when the cut keeps the text's end, first and last say how many characters
// of each end are shown. how tells the reader how to get the rest.
func marker(shown, total int, how string) string {
	return markerPrefix + strconv.Itoa(shown) + " of " + strconv.Itoa(total) + " characters; " + how + "]"
}

// endsMarker is marker for a head-and-tail cut.
func endsMarker(first, last, total int, how string) string {
	return markerPrefix + strconv.Itoa(first+last) + " of " + strconv.Itoa(total) + " characters (the first " +
		strconv.Itoa(first) + " and the last " + strconv.Itoa(last) + "); " + how + "]"
}

// cutAt returns the first n characters of m.text, a newline, the marker
// and, when l > 0, a newline and the last l characters: n + l must be less
// than m.joined.
func cutAt(m measured, n, l int, how string) string {
	if l <= 0 {
		return head(m.text, n) + "\n" + cutMarker(m, n, 0, how)
	}
	return head(m.text, n) + "\n" + cutMarker(m, n, l, how) + "\n" + tail(m.text, l)
}

// cutMarker returns the marker of the cut that keeps the first n and the
// last l characters of m.text.
func cutMarker(m measured, n, l int, how string) string {
	if l <= 0 {
		return marker(m.shown(n, 0), m.total(), how)
	}
	return endsMarker(m.shown(n, 0), m.shown(0, l), m.total(), how)
}

// fitHead returns the most characters n of the head such that
// cutAt(m, n, l, how) has at most limit characters (0 if none do; the
// caller makes sure that the marker and the tail fit).
func fitHead(m measured, l int, limit int, how string) int {
	newlines := 1
	if l > 0 {
		newlines = 2
	}
	size := func(n int) int { return n + l + newlines + chars(cutMarker(m, n, l, how)) }
	// The marker's length depends on the digits of its numbers, which the
	// digits of the total bound: lo fits, and the best is at most a few
	// digits above it.
	t := m.total()
	longest := chars(marker(t, t, how))
	if l > 0 {
		longest = chars(endsMarker(t, t, t, how))
	}
	top := m.joined - l - 1 // a cut shows less than the whole
	lo := min(top, max(0, limit-l-newlines-longest))
	best := lo
	for n := lo + 1; n <= min(top, lo+64); n++ {
		if size(n) <= limit {
			best = n
		}
	}
	return best
}

// cutToFit returns the cut of m with the last l characters and as much of
// the head as fits in limit characters.
func cutToFit(m measured, l, limit int, how string) string {
	return cutAt(m, fitHead(m, l, limit, how), l, how)
}
