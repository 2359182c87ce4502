package mcpcore

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCutFitsCapWhenTailLeavesNoRoomForTheLink: a typed result (sent
// cut with isError) kept in a store, under a TailChars at or near its
// maximum (MaxResultChars less the marker's room): the marker explains
// isError and names the link, which is longer than the room a maximal
// tail leaves. The block stays within MaxResultChars (the tail gives way),
// marked, with the true M and the link. Found: the block passed the cap by
// up to 16 characters. Sabotage: keeping c.tail whatever the marker's
// length -> this test fails (1011 characters under a cap of 1000).
func TestCutFitsCapWhenTailLeavesNoRoomForTheLink(t *testing.T) {
	for _, max := range []int{MinResultChars, MinResultChars + 1, 300, 1000} {
		for _, tail := range []int{0, 1, max - MinResultChars - 1, max - MinResultChars} {
			if tail < 0 || tail > max-MinResultChars {
				continue
			}
			for _, total := range []int{max + 1, 100 * max, 123457} {
				s := newServer(t, ServerLimits{MaxResultChars: max, TailChars: tail, Store: NewStore(1<<30, time.Minute)})
				text := mixed(total)
				rep := s.Cap(context.Background(), Result{Content: []Content{{Kind: Text, Text: text}}, Structured: map[string]any{"a": 1}})
				name := "max " + itoa(max) + " tail " + itoa(tail) + " total " + itoa(total)
				if rep == nil || rep.Link == nil {
					t.Fatalf("%s: not linked: %+v", name, rep)
				}
				if got := chars(rep.Text); got > max {
					t.Errorf("%s: the block has %d characters, over the cap", name, got)
				}
				if !strings.Contains(rep.Text, rep.Link.URI) || !rep.IsError {
					t.Errorf("%s: the block does not name its link, or is not flagged isError: %q", name, clip(rep.Text))
				}
				if _, m := parseMarker(t, rep.Text); m != total+len(`{"a":1}`) {
					t.Errorf("%s: M = %d, want %d", name, m, total+len(`{"a":1}`))
				}
			}
		}
	}
}
