package mcpbound

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTailCharsValidate: TailChars of both limits, at the boundary of the
// room the marker needs. Sabotage: a Validate without the upper bound
// accepts MaxResultChars - MinResultChars + 1.
func TestTailCharsValidate(t *testing.T) {
	for _, tc := range []struct {
		tail int
		ok   bool
	}{{0, true}, {-1, false}, {1000 - MinResultChars - 1, true}, {1000 - MinResultChars, true},
		{1000 - MinResultChars + 1, false}, {math.MaxInt, false}, {math.MinInt, false}} {
		if err := (ServerLimits{MaxResultChars: 1000, TailChars: tc.tail}).Validate(); (err == nil) != tc.ok {
			t.Errorf("ServerLimits TailChars %d: %v, want ok %v", tc.tail, err, tc.ok)
		}
		ctail := tc.tail + MinResultChars - MinClientChars // the same distance from the client's bound
		if tc.tail == math.MaxInt || tc.tail == math.MinInt || tc.tail == 0 || tc.tail == -1 {
			ctail = tc.tail
		}
		if err := (ClientLimits{MaxChars: 1000, TailChars: ctail}).Validate(); (err == nil) != tc.ok {
			t.Errorf("ClientLimits TailChars %d: %v, want ok %v", ctail, err, tc.ok)
		}
	}
}

// TestTailCut: a head-and-tail cut shows the first K characters, the marker
// (N = K + L, and the first and last counts), then the last L = TailChars
// characters, at most the cap in all, on the server (with and without a
// store) and on the client. Sabotage: dropping the tail from cutAt fails
// every case.
func TestTailCut(t *testing.T) {
	s := mixed(50000)
	check := func(name, out string, max, l int) {
		t.Helper()
		h, rest, ok := strings.Cut(out, "\n[truncated: ")
		mk, tl, ok2 := strings.Cut(rest, "]\n")
		if !ok || !ok2 || !utf8.ValidString(out) {
			t.Fatalf("%s: not head, marker, tail: %q", name, clip(out))
		}
		n, m := parseMarker(t, out)
		if tl != tail(s, l) || !strings.HasPrefix(s, h) || n != chars(h)+l || m != 50000 || chars(out) > max || chars(out) < max-2 ||
			!strings.Contains(mk, "(the first "+itoa(chars(h))+" and the last "+itoa(l)+")") {
			t.Errorf("%s: head %d, tail %d (want %d), marker %d of %d, %d characters (cap %d): %q",
				name, chars(h), chars(tl), l, n, m, chars(out), max, clip(out))
		}
	}
	for _, l := range []int{1, 500, 1000 - MinResultChars} {
		check("server", onlyText(t, serverCall(t, ServerLimits{MaxResultChars: 1000, TailChars: l}.Middleware(), textResult(s))), 1000, l)
		out, link := linked(t, ServerLimits{MaxResultChars: 1000, TailChars: l, Store: NewStore(0, 0)}.Middleware(), s)
		if link == nil {
			t.Fatal("no link")
		}
		check("server with a store", onlyText(t, out), 1000, l)
	}
	for _, l := range []int{1, 300, 1000 - MinClientChars} {
		r := newRig(t, ClientLimits{MaxChars: 1000, TailChars: l, MaxSpillBytes: 1000})
		check("client", onlyText(t, r.call(t, "t", textResult(s))), 1000, l)
	}
}
