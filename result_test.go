package boundhttp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

func TestResults(t *testing.T) {
	t.Parallel()
	text1 := text(3000)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		serve(w, body{coding: "br", data: encode("br", text1)})
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no such page", 404) })
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		serve(w, body{coding: "gzip", data: encode("gzip", bytes.Repeat([]byte("SECRET"), 1<<20))})
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte{0xff, 0xfe, 0}) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	s := httptest.NewServer(mux)
	defer s.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := "http://" + ln.Addr().String()
	ln.Close()

	client := &http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}}
	fetch := func(u string) boundhttp.Result {
		req, _ := http.NewRequest("GET", u, nil)
		return boundhttp.Fetch(client, req)
	}
	r := fetch(s.URL + "/moved")
	if r.Status != boundhttp.StatusComplete || !r.Complete || r.Body != string(text1) || r.URL != s.URL+"/ok" ||
		r.ContentType != "application/json" || r.Usage == nil || r.Usage.DecodedBytes != 3000 || r.HTTPStatus != 200 {
		t.Errorf("complete fetch: %+v", r)
	}
	r = fetch(s.URL + "/missing")
	if r.Status != boundhttp.StatusHTTPError || !r.Complete || r.HTTPStatus != 404 || r.Body != "no such page\n" {
		t.Errorf("404 fetch: %+v, want http_error with the error page", r)
	}
	r = fetch(s.URL + "/bomb")
	if r.Status != boundhttp.StatusRejected || r.Complete || r.Rejection == nil ||
		r.Rejection.Stage != limits.StageDecoded || r.Rejection.Limit != 1<<20 || r.Body != "" || r.BodyBase64 != "" {
		t.Errorf("bomb fetch: %+v, want rejected at decoded with no body", r)
	}
	js, _ := json.Marshal(r)
	for _, want := range []string{`"status":"rejected"`, `"complete":false`, `"usage":{"wire_bytes":`, `"stage":"decoded"`, `"limit":1048576`, `"observed":1048577`, `"encoding":"gzip"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("rejected result JSON %s lacks %s", js, want)
		}
	}
	if strings.Contains(string(js), "SECRET") || strings.Contains(string(js), `"body`) {
		t.Errorf("rejected result JSON carries body content: %s", js)
	}
	r = fetch(closed)
	if r.Status != boundhttp.StatusFailed || r.Error == "" || r.Rejection != nil {
		t.Errorf("connection refused: %+v, want failed", r)
	}
	r = fetch(s.URL + "/binary")
	if r.Status != boundhttp.StatusComplete || r.BodyBase64 != "//4A" || r.Body != "" {
		t.Errorf("binary body: %+v, want base64", r)
	}
	// A client without a boundhttp.Transport is refused, not read.
	req, _ := http.NewRequest("GET", s.URL+"/ok", nil)
	if r := boundhttp.Fetch(http.DefaultClient, req); r.Status != boundhttp.StatusFailed {
		t.Errorf("Fetch with a plain client: %+v, want failed", r)
	}
	resp, err := http.Get(s.URL + "/ok")
	if r := boundhttp.ResultOf(resp, err); r.Status != boundhttp.StatusFailed || r.Body != "" {
		t.Errorf("ResultOf(plain response) = %+v, want failed with no body", r)
	}
}

func TestPreview(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		serve(w, body{coding: "zstd", data: encode("zstd", bytes.Repeat([]byte("é"), 1<<20))}) // 2 MiB
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("tiny")) })
	mux.HandleFunc("/corrupt", func(w http.ResponseWriter, r *http.Request) {
		serve(w, body{coding: "gzip", data: []byte("not gzip at all")})
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	client := &http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}}
	preview := func(path string, n int64) boundhttp.Result {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		return boundhttp.Preview(client, req, n)
	}
	// 101 bytes cut the 51st two-byte character: it is dropped.
	r := preview("/long", 101)
	if r.Status != boundhttp.StatusPreview || r.Complete || r.Body != strings.Repeat("é", 50) || !strings.Contains(r.Notice, "first 101 decoded bytes") {
		t.Errorf("preview of a 2 MiB body (over budget), 101 bytes: %+v", r)
	}
	if r.Usage == nil || r.Usage.DecodedBytes > 101 {
		t.Errorf("preview usage %+v, want at most 101 decoded bytes", r.Usage)
	}
	// Even a body that ended within the preview is not labelled complete.
	r = preview("/short", 100)
	if r.Status != boundhttp.StatusPreview || r.Complete || r.Body != "tiny" {
		t.Errorf("preview of a 4-byte body: %+v, want preview, not complete", r)
	}
	if r := preview("/corrupt", 100); r.Status != boundhttp.StatusRejected || r.Rejection.Stage != limits.StageIntegrity {
		t.Errorf("preview of a corrupt body: %+v, want rejected at integrity", r)
	}
	// The budget still applies to a preview.
	req, _ := http.NewRequest("GET", s.URL+"/long", nil)
	req = req.WithContext(boundhttp.WithBudget(req.Context(), limits.Budget{MaxDecodedBytes: 50}))
	if r := boundhttp.Preview(client, req, 100); r.Status != boundhttp.StatusRejected || r.Rejection.Stage != limits.StageDecoded {
		t.Errorf("preview of 100 bytes under a 50-byte budget: %+v, want rejected", r)
	}
}

// loggingTransport is a RoundTripper around another, as logging or retry
// layers are: it wraps the response body.
type loggingTransport struct {
	next  http.RoundTripper
	calls atomic.Int64
}

func (l *loggingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	l.calls.Add(1)
	resp, err := l.next.RoundTrip(r)
	if err == nil {
		resp.Body = struct{ io.ReadCloser }{resp.Body}
	}
	return resp, err
}

// TestFetchThroughWrappedTransport pins the trap "only the outermost
// RoundTripper is checked": Fetch and Preview accept any chain that ends in
// a *Transport (the usage record proves it), still refuse to read a body
// that did not come through one, and fail cleanly, without a panic, on a
// nil client or request.
func TestFetchThroughWrappedTransport(t *testing.T) {
	t.Parallel()
	data := text(5000)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	lt := &loggingTransport{next: &boundhttp.Transport{}}
	client := &http.Client{Transport: lt}
	req, _ := http.NewRequest("GET", s.URL, nil)
	if r := boundhttp.Fetch(client, req); r.Status != boundhttp.StatusComplete || !r.Complete || r.Body != string(data) || r.Usage == nil || r.Usage.DecodedBytes != 5000 {
		t.Errorf("Fetch through a logging wrapper: %s, want complete", summary(r))
	}
	if r := boundhttp.Preview(client, req, 10); r.Status != boundhttp.StatusPreview || r.Body != string(data[:10]) {
		t.Errorf("Preview through a logging wrapper: %s, want a preview of 10 bytes", summary(r))
	}
	if n := lt.calls.Load(); n != 2 {
		t.Errorf("the wrapper saw %d requests, want 2", n)
	}
	// A wrapper around a plain transport: refused, not read.
	plain := &http.Client{Transport: &loggingTransport{next: http.DefaultTransport}}
	if r := boundhttp.Fetch(plain, req); r.Status != boundhttp.StatusFailed || r.Body != "" {
		t.Errorf("Fetch through a wrapper of a plain transport: %s, want failed with no body", summary(r))
	}
	if r := boundhttp.Preview(plain, req, 10); r.Status != boundhttp.StatusFailed || r.Body != "" {
		t.Errorf("Preview through a wrapper of a plain transport: %s, want failed with no body", summary(r))
	}
	for _, tt := range []struct {
		client *http.Client
		req    *http.Request
	}{{nil, req}, {client, nil}} {
		if r := boundhttp.Fetch(tt.client, tt.req); r.Status != boundhttp.StatusFailed || r.Error == "" {
			t.Errorf("Fetch(%v, %v) = %s, want failed", tt.client, tt.req, summary(r))
		}
		if r := boundhttp.Preview(tt.client, tt.req, 10); r.Status != boundhttp.StatusFailed || r.Error == "" {
			t.Errorf("Preview(%v, %v) = %s, want failed", tt.client, tt.req, summary(r))
		}
	}
}

// TestRejectedResultKeepsStatusAndURL pins the trap "a rejection loses its
// response": a 200 that was too big and a 503 that was too big are told
// apart, with their URL and the bytes read until the rejection.
func TestRejectedResultKeepsStatusAndURL(t *testing.T) {
	t.Parallel()
	bomb := encode("gzip", bytes.Repeat([]byte("x"), 1<<20))
	mux := http.NewServeMux()
	for _, status := range []int{200, 503} {
		mux.HandleFunc(fmt.Sprintf("/%d", status), func(w http.ResponseWriter, r *http.Request) {
			serve(w, body{coding: "gzip", data: bomb, status: status})
		})
	}
	s := httptest.NewServer(mux)
	defer s.Close()
	client := &http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1000}}}
	for _, status := range []int{200, 503} {
		u := fmt.Sprintf("%s/%d", s.URL, status)
		req, _ := http.NewRequest("GET", u, nil)
		r := boundhttp.Fetch(client, req)
		if r.Status != boundhttp.StatusRejected || r.HTTPStatus != status || r.URL != u || r.Rejection == nil || r.Rejection.Stage != limits.StageDecoded ||
			r.Usage == nil || r.Usage.DecodedBytes != 1001 || r.Body != "" {
			t.Errorf("Fetch of a too-big %d: %s, URL %q, usage %+v; want rejected at decoded with status %d, URL %q, 1001 decoded bytes", status, summary(r), r.URL, r.Usage, status, u)
		}
		_, err := client.Do(req)
		var re *boundhttp.ResponseError
		var le *limits.Error
		if !errors.As(err, &re) || re.StatusCode != status || !errors.As(err, &le) || !errors.Is(err, limits.ErrTooLarge) {
			t.Errorf("GET a too-big %d: %v, want a *ResponseError of status %d around a *limits.Error", status, err, status)
		}
	}
}

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
