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
				serverStage = string(p.Stage)
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
	req, _ := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	if _, err := (&boundhttp.Transport{JSON: &limits.JSON{MaxArrayLen: -1}}).RoundTrip(req); err == nil || !strings.Contains(err.Error(), "JSON.MaxArrayLen") {
		t.Errorf("RoundTrip with JSON MaxArrayLen -1 = %v, want the invalid limit named before any request", err)
	}
}

// TestJSONBreachStopsTheStream: in streaming mode the shape check runs as
// the body is read, so a breach near the start is reported there, not
// after the whole body was handed over.
func TestJSONBreachStopsTheStream(t *testing.T) {
	t.Parallel()
	shape := limits.JSON{MaxArrayLen: 4}
	doc := "[" + strings.Repeat("1,", 1<<20) + "1]" // the fifth element breaks the limit
	read := make(chan int, 1)
	mw, _ := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{JSON: &shape, Streaming: true})
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		read <- int(n)
	})))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(doc))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := <-read; resp.StatusCode != 413 || n > 64<<10 {
		t.Errorf("Middleware streaming: handler read %d of %d bytes before the breach, status %d; want the breach early and 413", n, len(doc), resp.StatusCode)
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	}))
	defer s.Close()
	cresp, err := (&http.Client{Transport: &boundhttp.Transport{JSON: &shape, Streaming: true}}).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, cresp.Body)
	cresp.Body.Close()
	if stageOf(err) != "json" || n > 64<<10 {
		t.Errorf("Transport streaming: read %d bytes, %v; want the json breach early", n, err)
	}
}
