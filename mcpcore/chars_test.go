package mcpcore

import (
	"testing"
	"unicode/utf8"
)

func TestHeadTail(t *testing.T) {
	s := mixed(100)
	for n := 0; n <= 101; n++ {
		h, tl := head(s, n), tail(s, n)
		want := min(n, 100)
		if !utf8.ValidString(h) || !utf8.ValidString(tl) || chars(h) != want || chars(tl) != want {
			t.Fatalf("n=%d: head %d chars valid=%v, tail %d chars valid=%v; want %d", n, chars(h), utf8.ValidString(h), chars(tl), utf8.ValidString(tl), want)
		}
		if s[:len(h)] != h || s[len(s)-len(tl):] != tl {
			t.Fatalf("n=%d: head or tail is not a prefix or suffix", n)
		}
	}
}

// TestCutToFit: the cut text plus its marker never exceeds the limit, and
// shows as many characters as fit.
func TestCutToFit(t *testing.T) {
	for _, total := range []int{300, 999, 1000, 1001, 123456} {
		s := mixed(total)
		for _, limit := range []int{256, 999, 1000} {
			if total <= limit {
				continue
			}
			out := cutToFit(measure([]string{s}), 0, limit, "ask again")
			n, m := parseMarker(t, out)
			if got := chars(out); got > limit || got < limit-1 {
				t.Errorf("total %d, limit %d: %d characters, want %d or %d", total, limit, got, limit-1, limit)
			}
			if m != total || out[:len(head(s, n))] != head(s, n) || !utf8.ValidString(out) {
				t.Errorf("total %d, limit %d: marker %d of %d does not describe the head", total, limit, n, m)
			}
		}
	}
}
