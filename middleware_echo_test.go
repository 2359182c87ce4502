package boundhttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHugeContentEncodingNotEchoed pins the trap of echoing attacker bytes:
// a 500 KB Content-Encoding (or path) must not come back whole in the
// problem document or the log record.
func TestHugeContentEncodingNotEchoed(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x\x01", 250000)
	var logs bytes.Buffer
	s := echoServer(t, boundhttp.MiddlewareConfig{
		Budget: limits.Budget{MaxLayers: 5},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	for _, tt := range []struct {
		name, coding, path string
	}{
		{"one huge unknown coding", strings.Repeat("x", 500000), "/"},
		{"a huge coding after gzip", "gzip, " + strings.Repeat("y", 500000), "/"},
		{"control bytes", strings.ReplaceAll(huge, "\x01", "\t"), "/"},
		{"many codings", strings.Repeat("gzip,", 100000), "/"},
		{"a disabled coding, huge path", "gzip", "/" + strings.Repeat("p", 500000)},
	} {
		logs.Reset()
		srv := s
		if tt.name == "a disabled coding, huge path" {
			srv = echoServer(t, boundhttp.MiddlewareConfig{Codings: []string{},
				Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		}
		req, _ := http.NewRequest("POST", srv.URL+tt.path, strings.NewReader("hello"))
		req.Header.Set("Content-Encoding", tt.coding)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 4 || len(answer) > 2048 || logs.Len() == 0 || logs.Len() > 2048 {
			t.Errorf("%s: status %d, problem %d bytes, log record %d bytes; want a 4xx, both under 2 KiB\n%.300s\n%.300s",
				tt.name, resp.StatusCode, len(answer), logs.Len(), answer, logs.String())
		}
	}
}

// TestJSONPointerInProblemAndLog pins that the field and JSON Pointer of a
// JSON breach are members of the problem document and the log record, not
// only words in its detail.
func TestJSONPointerInProblemAndLog(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := echoServer(t, boundhttp.MiddlewareConfig{
		JSON:   &limits.JSON{MaxDepth: 2},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	req, _ := http.NewRequest("POST", s.URL, strings.NewReader(`{"a":{"b":{"c":1}}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p := problem(t, string(answer))
	if resp.StatusCode != 413 || p.Stage != "json" || p.Field != "MaxDepth" || p.Pointer != "/a/b" {
		t.Errorf("too deep: %d %+v; want 413 json with field MaxDepth, pointer /a/b", resp.StatusCode, p)
	}
	var raw map[string]any
	json.Unmarshal(logs.Bytes(), &raw)
	if raw["field"] != "MaxDepth" || raw["pointer"] != "/a/b" {
		t.Errorf("log record %s: want field MaxDepth and pointer /a/b", logs.Bytes())
	}
}

// TestRouteInLogIsPatternWhenKnown pins what the log's route is: the
// ServeMux pattern when the middleware sits inside the mux, or wraps it in
// streaming mode (the pattern is known after the handler ran), else the
// path.
func TestRouteInLogIsPatternWhenKnown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		streaming bool
		inside    bool
		want      string
	}{
		{"inside the mux", false, true, "POST /tools/{name}"},
		{"around the mux, streaming", true, false, "POST /tools/{name}"},
		{"around the mux, whole body", false, false, "/tools/x"},
	} {
		var logs bytes.Buffer
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
			Budget: limits.Budget{MaxWireBytes: 10}, Streaming: tt.streaming,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.ReadAll(r.Body) })
		mux := http.NewServeMux()
		if tt.inside {
			mux.Handle("POST /tools/{name}", mw(h))
			h = mux
		} else {
			mux.Handle("POST /tools/{name}", h)
			h = mw(mux)
		}
		w := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/tools/x", struct{ io.Reader }{strings.NewReader(strings.Repeat("a", 100))})
		h.ServeHTTP(w, req)
		var rec map[string]any
		json.Unmarshal(logs.Bytes(), &rec)
		if w.Code != 413 || rec["route"] != tt.want || req.Pattern != "" && !tt.inside {
			t.Errorf("%s: status %d, route %v (request's Pattern %q); want 413, %q", tt.name, w.Code, rec["route"], req.Pattern, tt.want)
		}
	}
}
