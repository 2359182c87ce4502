package boundhttp_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
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

// TestJSONCheckNotSkippedByContentType pins the trap of letting the peer
// choose the mode: with JSONAlways a body is checked whatever Content-Type
// it declares or omits, and without it a malformed parameter does not hide
// application/json.
func TestJSONCheckNotSkippedByContentType(t *testing.T) {
	t.Parallel()
	const deep, shallow = `{"a":{"b":{"c":1}}}`, `{"a":1}`
	for _, streaming := range []bool{false, true} {
		always := echoServer(t, boundhttp.MiddlewareConfig{JSON: &limits.JSON{MaxDepth: 2}, JSONAlways: true, Streaming: streaming})
		byType := echoServer(t, boundhttp.MiddlewareConfig{JSON: &limits.JSON{MaxDepth: 2}, Streaming: streaming})
		defaults := echoServer(t, boundhttp.MiddlewareConfig{JSONAlways: true, Streaming: streaming})
		for _, tt := range []struct {
			name        string
			url         string
			contentType string // "-" for none
			body        string
			status      int
		}{
			{"always, no Content-Type, too deep", always.URL, "-", deep, 413},
			{"always, text/plain, too deep", always.URL, "text/plain", deep, 413},
			{"always, application/json; charset, too deep", always.URL, "application/json; charset", deep, 413},
			{"always, application/json, too deep", always.URL, "application/json", deep, 413},
			{"always, text/plain, shallow", always.URL, "text/plain", shallow, 200},
			{"always, no Content-Type, not JSON", always.URL, "-", "hello", 400},
			{"by type, application/json; charset, too deep", byType.URL, "application/json; charset", deep, 413},
			{"by type, text/plain, too deep (not declared JSON)", byType.URL, "text/plain", deep, 200},
			{"by type, text/plain, not JSON", byType.URL, "text/plain", "hello", 200},
			{"always with default limits, not JSON", defaults.URL, "-", "hello", 400},
			{"always with default limits, shallow", defaults.URL, "-", shallow, 200},
		} {
			req, _ := http.NewRequest("POST", tt.url, strings.NewReader(tt.body))
			if tt.contentType != "-" {
				req.Header.Set("Content-Type", tt.contentType)
			} else {
				req.Header["Content-Type"] = nil
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("streaming %v, %s: status %d (%s), want %d", streaming, tt.name, resp.StatusCode, answer, tt.status)
			}
		}
	}
}

// TestJSONAlwaysEmptyBodyIsNoBody pins the trap of an empty body judged by
// its framing: net/http presents Content-Length: 0 as http.NoBody, which
// skips the JSON check, while an empty chunked body (or a compressed empty
// body) was checked and answered 400 as "not JSON". An empty body, zero
// decoded bytes, is no body however it is framed: the handler gets it and
// decides. A body of one space is not empty and is still refused.
func TestJSONAlwaysEmptyBodyIsNoBody(t *testing.T) {
	t.Parallel()
	gzEmpty := testenc.Encode("gzip", nil)
	for _, streaming := range []bool{false, true} {
		always := echoServer(t, boundhttp.MiddlewareConfig{JSONAlways: true, Streaming: streaming})
		byType := echoServer(t, boundhttp.MiddlewareConfig{JSON: &limits.JSON{}, Streaming: streaming})
		for _, tt := range []struct {
			name    string
			url     string
			headers string
			body    string
			status  int
		}{
			{"always, Content-Length: 0", always.URL, "Content-Length: 0\r\n", "", 200},
			{"always, empty chunked", always.URL, "Transfer-Encoding: chunked\r\n", "0\r\n\r\n", 200},
			{"always, empty chunked, application/json", always.URL, "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", 200},
			{"always, gzip of nothing", always.URL, fmt.Sprintf("Content-Encoding: gzip\r\nContent-Length: %d\r\n", len(gzEmpty)), string(gzEmpty), 200},
			{"always, one space, chunked", always.URL, "Transfer-Encoding: chunked\r\n", "1\r\n \r\n0\r\n\r\n", 400},
			{"always, one space", always.URL, "Content-Length: 1\r\n", " ", 400},
			{"by type, empty chunked, application/json", byType.URL, "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n", 200},
			{"by type, Content-Length: 0, application/json", byType.URL, "Content-Type: application/json\r\nContent-Length: 0\r\n", "", 200},
		} {
			status, answer := rawExchange(t, strings.TrimPrefix(tt.url, "http://"),
				"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"+tt.headers+"\r\n"+tt.body)
			if status != tt.status {
				t.Errorf("streaming %v, %s: status %d (%s), want %d", streaming, tt.name, status, answer, tt.status)
			}
			if tt.status == 200 && !strings.HasPrefix(answer, fmt.Sprintf("%x 0 ", sha256.Sum256(nil))) {
				t.Errorf("streaming %v, %s: handler answered %q, want an empty body", streaming, tt.name, answer)
			}
		}
	}
}

// TestMiddlewareJSONLimitsChangedAfterConstruction (trap: a configuration
// checked once and read again unchecked): NewMiddleware checks the JSON
// limits it is given by pointer. Limits changed through that pointer later
// must not reach a body: a streaming body's pooled JSON checker, whose Reset
// refused them, was used with the state of the body it checked before, and a
// whole body was refused with the limits' own error. The Middleware goes on
// with the limits it checked.
func TestMiddlewareJSONLimitsChangedAfterConstruction(t *testing.T) {
	t.Parallel()
	const doc = `[[1,2],[3]]`
	for _, streaming := range []bool{false, true} {
		j := &limits.JSON{MaxDepth: 2}
		mw := mustMW(t, boundhttp.MiddlewareConfig{JSON: j, JSONAlways: true, Streaming: streaming})
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if data, err := io.ReadAll(r.Body); err == nil {
				w.Write(data)
			}
		}))
		send := func() (int, string) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("POST", "/", strings.NewReader(doc)))
			return rec.Code, rec.Body.String()
		}
		if code, got := send(); code != 200 || got != doc {
			t.Fatalf("streaming %v: first request: %d %q", streaming, code, got)
		}
		j.MaxDepth = -1
		for i := range 3 {
			if code, got := send(); code != 200 || got != doc {
				t.Errorf("streaming %v: request %d after the change: %d %.80q; want 200 and the body", streaming, i, code, got)
			}
		}
	}
}
