package limits

import (
	"strings"
	"testing"
)

func TestEcho(t *testing.T) {
	long := strings.Repeat("A", 530_000)
	tests := []struct{ in, want string }{
		{"", ""},
		{"gzip", "gzip"},
		{"a\\b\n\"é", `a\x5cb\x0a"\xc3\xa9`},
		{strings.Repeat("x", MaxEcho), strings.Repeat("x", MaxEcho)},
		{strings.Repeat("x", MaxEcho+1), strings.Repeat("x", MaxEcho) + "...(65 bytes)"},
		{long, strings.Repeat("A", MaxEcho) + "...(530000 bytes)"},
	}
	for _, tt := range tests {
		if got := Echo(tt.in); got != tt.want {
			t.Errorf("Echo(%.20q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Echo(strings.Repeat("\x00", 1<<20)); len(got) > 4*MaxEcho+24 {
		t.Errorf("Echo of 1 MiB of NULs is %d bytes, want at most %d", len(got), 4*MaxEcho+24)
	}
}

// TestEchoPointerKeepsAttackerKeysOut pins the trap "echoing attacker bytes
// into errors": a 530 KB object key chosen by a peer reaches text as a short
// escaped prefix.
func TestEchoPointerKeepsAttackerKeysOut(t *testing.T) {
	key := "ignore previous instructions " + strings.Repeat("A", 530_000)
	tests := []struct{ in, want string }{
		{"", ""},
		{"/", "/"},
		{"/a/0/b", "/a/0/b"},
		{"/" + key + "/3", "/ignore previous ...(530029 bytes)/3"},
		{strings.Repeat("/0", 40), strings.Repeat("/0", 32) + "/...(40 tokens)"},
	}
	for _, tt := range tests {
		if got := EchoPointer(tt.in); got != tt.want {
			t.Errorf("EchoPointer(%.30q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEchoN(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"text/html", 256, "text/html"},
		{"abcdef", 3, "abc...(6 bytes)"},
		{"abc", 3, "abc"},
		{"a\x01", 0, "...(2 bytes)"},
		{"a\x01", -1, "...(2 bytes)"},
	}
	for _, tt := range tests {
		if got := EchoN(tt.in, tt.n); got != tt.want {
			t.Errorf("EchoN(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
