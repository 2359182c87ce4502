package boundhttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestJSONShapeLimits: the same JSON limits on the Transport and the
// Middleware, in both modes, reject the same documents at the same place.
func TestJSONShapeLimits(t *testing.T) {
	t.Parallel()
	shape := limits.JSON{MaxDepth: 3, MaxArrayLen: 4}
	tests := []struct {
		doc, ctype     string
		stage, pointer string
	}{
		{`{"a":[1,2,3,4]}`, "application/json", "", ""},
		{`{"a":[1,2,3,4,5]}`, "application/json", "json", "/a/4"},
		{`{"a":[[[1]]]}`, "application/vnd.api+json; charset=utf-8", "json", "/a/0/0"},
		{`{"a":`, "application/json", "integrity", ""},
		{`{"a":[1,2,3,4,5]}`, "text/plain", "", ""}, // not JSON: not checked
	}
	for _, streaming := range []bool{false, true} {
		for _, tt := range tests {
			// Client side.
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ctype)
				serve(w, body{coding: "gzip", data: encode("gzip", []byte(tt.doc))})
			}))
			defer s.Close()
			tr := &boundhttp.Transport{JSON: &shape, Streaming: streaming}
			_, got, err := get(t, tr, s.URL)
			if stageOf(err) != tt.stage {
				t.Errorf("Transport (streaming %v) %s as %s: %v, want stage %q", streaming, tt.doc, tt.ctype, err, tt.stage)
			} else if err == nil && string(got) != tt.doc {
				t.Errorf("Transport %s: got %q", tt.doc, got)
			}
			var e *limits.Error
			if errors.As(err, &e) && tt.stage == "json" && e.Pointer != tt.pointer {
				t.Errorf("Transport %s: pointer %q, want %q", tt.doc, e.Pointer, tt.pointer)
			}
			// Server side.
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{JSON: &shape, Streaming: streaming})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body) // on a breach in streaming mode the middleware answers
			})))
			defer srv.Close()
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(tt.doc))
			req.Header.Set("Content-Type", tt.ctype)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			serverStage := ""
			if resp.StatusCode != 200 {
				p := problem(t, string(answer))
				serverStage = p.Stage
				if tt.stage == "json" && (resp.StatusCode != 413 || !strings.Contains(p.Detail, tt.pointer)) {
					t.Errorf("Middleware %s: %d %s, want 413 naming %s", tt.doc, resp.StatusCode, answer, tt.pointer)
				}
			}
			if serverStage != tt.stage {
				t.Errorf("Middleware (streaming %v) %s as %s: status %d stage %q, want %q", streaming, tt.doc, tt.ctype, resp.StatusCode, serverStage, tt.stage)
			}
		}
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{JSON: &limits.JSON{MaxDepth: -1}}); err == nil {
		t.Errorf("NewMiddleware(JSON MaxDepth -1) = nil error")
	}
}
