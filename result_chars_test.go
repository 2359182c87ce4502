package boundhttp_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// escapeHeavy builds a body whose Result serialises to exactly n
// characters (of the body field) from units of one kind: unit serialises
// to w characters, and the rest is filled with 'a'.
func escapeHeavy(unit string, w, n int) string {
	return strings.Repeat(unit, n/w) + strings.Repeat("a", n%w)
}

// TestResultHoldsSerialisedBodyToCharCap pins the unit an agent is charged
// in: with Budget.MaxDecodedRunes set, Fetch and Preview hold the body as
// the Result serialises it (JSON escapes, base64 for a body that is not
// UTF-8) to the cap, not its decoded characters. NULs, U+2028 and '<'
// take 6 characters each, a newline 2, and 0x80 bytes (continuation
// bytes, no characters at all) 4 per 3 bytes of base64: cap-1 and cap
// serialised characters pass, cap+1 is rejected at stage runes with the
// serialised count observed.
func TestResultHoldsSerialisedBodyToCharCap(t *testing.T) {
	t.Parallel()
	const limit = 50_000
	type row struct {
		name   string
		body   string
		cap    int64
		reject bool
	}
	var rows []row
	for _, k := range []struct {
		name, unit string
		w          int
	}{{"NUL", "\x00", 6}, {"U+2028", "\u2028", 6}, {"<", "<", 6}, {"newline", "\n", 2}, {"quote", `"`, 2}, {"é", "é", 1}} {
		for _, d := range []int{-1, 0, 1} {
			rows = append(rows, row{k.name, escapeHeavy(k.unit, k.w, limit+d), limit, d > 0})
		}
	}
	// base64 comes in steps of 4 characters: 37,500 bytes are 50,000
	// characters, cap-1, cap and cap+1 as the cap moves.
	cont := func(n int) string { return strings.Repeat("\x80", n) }
	rows = append(rows,
		row{"0x80, cap-1", cont(37_500), limit + 1, false},
		row{"0x80, cap", cont(37_500), limit, false},
		row{"0x80, cap+1", cont(37_500), limit - 1, true},
		row{"4 MiB of 0x80", cont(4 << 20), limit, true},
		row{"49,999 NULs", strings.Repeat("\x00", 49_999), limit, true},
		row{"no cap (0)", strings.Repeat("\x00", 49_999), 0, false},
		row{"huge cap", strings.Repeat("\x00", 49_999), math.MaxInt64, false},
	)
	t.Run("negative cap", func(t *testing.T) {
		client := &http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{MaxDecodedRunes: -1}}}
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:9/", nil)
		if r := boundhttp.Fetch(client, req); r.Status != boundhttp.StatusFailed || !strings.Contains(r.Error, "MaxDecodedRunes") {
			t.Errorf("cap -1: %s %q, want a failure naming MaxDecodedRunes", r.Status, r.Error)
		}
	})
	for _, tt := range rows {
		body := tt.body
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(body))
		}))
		client := &http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{MaxDecodedRunes: tt.cap}}}
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		r := boundhttp.Fetch(client, req)
		srv.Close()
		name := tt.name
		if tt.reject {
			if r.Status != boundhttp.StatusRejected || r.Rejection == nil || r.Rejection.Stage != limits.StageRunes ||
				r.Rejection.Limit != tt.cap || r.Rejection.Observed <= tt.cap {
				t.Errorf("%s (%d bytes, cap %d): %s %+v, want rejected at stage runes over the cap", name, len(body), tt.cap, r.Status, r.Rejection)
			}
			if r.Body != "" || r.BodyBase64 != "" {
				t.Errorf("%s: a rejected Result carries a body", name)
			}
			continue
		}
		if r.Status != boundhttp.StatusComplete {
			t.Errorf("%s (%d bytes, cap %d): %s %+v, want complete", name, len(body), tt.cap, r.Status, r.Rejection)
			continue
		}
		field, _ := json.Marshal(r.Body)
		if r.BodyBase64 != "" {
			field, _ = json.Marshal(r.BodyBase64)
		}
		got := int64(utf8.RuneCount(field) - 2)
		if got != r.BodyChars() || tt.cap > 0 && got > tt.cap {
			t.Errorf("%s: the body serialises to %d characters, BodyChars %d, cap %d", name, got, r.BodyChars(), tt.cap)
		}
	}
}

// TestPreviewHoldsSerialisedBodyToCharCap pins the same unit for a
// preview: 10,000 NULs within a 10,000-byte preview are 60,000 characters
// once serialised, over a 50,000-character cap.
func TestPreviewHoldsSerialisedBodyToCharCap(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("\x00", 20_000)))
	}))
	defer srv.Close()
	client := &http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{MaxDecodedRunes: 50_000}}}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if r := boundhttp.Preview(client, req, 10_000); r.Status != boundhttp.StatusRejected || r.Rejection.Observed != 60_000 {
		t.Errorf("Preview: %s %+v, want rejected with 60,000 characters observed", r.Status, r.Rejection)
	}
	if r := boundhttp.Preview(client, req, 8_000); r.Status != boundhttp.StatusPreview || r.BodyChars() != 48_000 {
		t.Errorf("Preview: %s, %d characters, want a preview of 48,000", r.Status, r.BodyChars())
	}
}
