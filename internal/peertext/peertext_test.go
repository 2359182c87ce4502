package peertext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutFallsOnARuneBoundary pins the cut of a stored peer string: at most
// Max bytes, never inside a rune of valid UTF-8, and bounded even when the
// string is a megabyte of continuation bytes (no rune start to back off to).
func TestCutFallsOnARuneBoundary(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"short", "gzip", "gzip"},
		{"exactly Max", strings.Repeat("x", Max), strings.Repeat("x", Max)},
		{"Max+1", strings.Repeat("x", Max+1), strings.Repeat("x", Max)},
		{"2-byte runes, boundary at Max", strings.Repeat("é", Max), strings.Repeat("é", Max/2)},
		{"2-byte rune across Max", "x" + strings.Repeat("é", Max), "x" + strings.Repeat("é", Max/2-1)},
		{"4-byte rune across Max", strings.Repeat("x", Max-1) + "😀", strings.Repeat("x", Max-1)},
		{"continuation bytes only", strings.Repeat("\x80", 1<<20), strings.Repeat("\x80", Max)},
		{"raw control bytes stay raw", "a\x00\x01\"\\", "a\x00\x01\"\\"},
	}
	for _, tt := range tests {
		got := Cut(tt.in)
		if got != tt.want {
			t.Errorf("%s: Cut = %q, want %q", tt.name, got, tt.want)
		}
		if len(got) > Max || utf8.ValidString(tt.in) && !utf8.ValidString(got) {
			t.Errorf("%s: Cut = %d bytes (valid %v), want at most %d, valid", tt.name, len(got), utf8.ValidString(got), Max)
		}
	}
}
