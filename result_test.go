package boundhttp_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	if r.Status != boundhttp.StatusComplete || !r.Accepted || !r.Complete || r.Body != string(text1) || r.URL != s.URL+"/ok" ||
		r.ContentType != "application/json" || r.Usage == nil || r.Usage.DecodedBytes != 3000 || r.HTTPStatus != 200 {
		t.Errorf("complete fetch: %+v", r)
	}
	r = fetch(s.URL + "/missing")
	if r.Status != boundhttp.StatusHTTPError || !r.Complete || r.HTTPStatus != 404 || r.Body != "no such page\n" {
		t.Errorf("404 fetch: %+v, want http_error with the error page", r)
	}
	r = fetch(s.URL + "/bomb")
	if r.Status != boundhttp.StatusRejected || r.Accepted || r.Complete || r.Rejection == nil ||
		r.Rejection.Stage != limits.StageDecoded || r.Rejection.Limit != 1<<20 || r.Body != "" || r.BodyBase64 != "" {
		t.Errorf("bomb fetch: %+v, want rejected at decoded with no body", r)
	}
	js, _ := json.Marshal(r)
	for _, want := range []string{`"status":"rejected"`, `"accepted":false`, `"stage":"decoded"`, `"limit":1048576`, `"observed":1048577`, `"encoding":"gzip"`} {
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
	if r.Status != boundhttp.StatusPreview || r.Complete || r.Accepted || r.Body != strings.Repeat("é", 50) || !strings.Contains(r.Notice, "first 101 decoded bytes") {
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
