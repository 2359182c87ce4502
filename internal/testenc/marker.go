package testenc

import (
	"regexp"
	"strconv"
	"testing"
)

// markerRE matches the beginning of the MCP caps' cut marker.
var markerRE = regexp.MustCompile(`\[truncated: showing (\d+) of (\d+) characters`)

// ParseMarker returns N and M of the first cut marker ("[truncated:
// showing N of M characters") in s, failing the test if there is none.
func ParseMarker(t testing.TB, s string) (n, m int) {
	t.Helper()
	sm := markerRE.FindStringSubmatch(s)
	if sm == nil {
		t.Fatalf("no marker in %q", Clip(s))
	}
	n, _ = strconv.Atoi(sm[1])
	m, _ = strconv.Atoi(sm[2])
	return n, m
}

// Clip shortens s to its first and last 150 bytes, for a failure message.
func Clip(s string) string {
	if len(s) > 300 {
		return s[:150] + "..." + s[len(s)-150:]
	}
	return s
}
