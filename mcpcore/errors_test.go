package mcpcore

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorTextsCappedAtTheirLimits is the boundary table of the two caps on
// error texts on their way to a model: a server's CapError (the message of
// a protocol error, cut as an error result is to MaxResultChars) and a
// client's TrimError (a server's JSON-RPC error message, its two ends kept
// within MaxErrorChars). Exactly the limit passes untouched, one character
// more is cut and carries the marker, and nothing cut is longer than the
// limit. Sabotage: CapError returning msg unchanged fails the limit+1 and
// huge rows of the server half; TrimError likewise on the client half.
func TestErrorTextsCappedAtTheirLimits(t *testing.T) {
	t.Parallel()
	srv, err := NewServer(ServerLimits{MaxResultChars: 2000})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := NewClient(ClientLimits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		limit  int
		marker string
		cap    func(string) string
	}{
		{"server CapError", 2000, "the rest of this error message was cut", srv.CapError},
		{"client TrimError", DefaultMaxErrorChars, "these are its first and last 5000", cl.TrimError},
	} {
		for _, n := range []int{0, 1, tt.limit - 1, tt.limit, tt.limit + 1, 300000} {
			msg := mixed(n)
			got := tt.cap(msg)
			c := utf8.RuneCountInString(got)
			switch {
			case n <= tt.limit && got != msg:
				t.Errorf("%s, %d characters: changed to %d, want it untouched", tt.name, n, c)
			case n > tt.limit && (c > tt.limit || !strings.Contains(got, tt.marker)):
				t.Errorf("%s, %d characters: %d characters, marker %v; want at most %d with the marker", tt.name, n, c, strings.Contains(got, tt.marker), tt.limit)
			}
		}
	}
}
