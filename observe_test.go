package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestObserveReportsEveryOutcome pins the observability hook: one Outcome
// per request body (accepted with its usage, rejected with stage, limit and
// observed, busy) and one per response over the cap, in whole and
// streaming mode, with the route a metrics label needs.
func TestObserveReportsEveryOutcome(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		var mu sync.Mutex
		var got []string
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
			Budget:           limits.Budget{MaxWireBytes: 1000, MaxDecodedBytes: 1000},
			Streaming:        streaming,
			MaxResponseBytes: 10,
			InFlight:         limits.NewInFlight(100 << 10), // room for gzip, not for zstd
			Observe: func(o boundhttp.Outcome) {
				mu.Lock()
				defer mu.Unlock()
				s := fmt.Sprintf("%s %s %s stage=%s", o.Kind, o.Method, o.Route, o.Stage())
				if o.Err != nil {
					s += fmt.Sprintf(" limit=%d observed=%d", o.Err.Limit, o.Err.Observed)
				} else {
					s += fmt.Sprintf(" wire=%d decoded=%d", o.Usage.WireBytes, o.Usage.DecodedBytes)
				}
				got = append(got, s)
			}})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			w.Write(b) // over the 10-byte response cap when long
		})
		s := httptest.NewServer(mw(mux))
		for _, tt := range []struct {
			coding string
			data   []byte
		}{
			{"", []byte("short")},
			{"", bytes.Repeat([]byte("x"), 1001)},                     // wire
			{"gzip", encode("gzip", bytes.Repeat([]byte("x"), 1001))}, // decoded
			{"zstd", encode("zstd", bytes.Repeat([]byte("x"), 100))},  // in flight: zstd's state is 640 KiB and more
			{"", []byte("a response longer than ten bytes")},
		} {
			req, _ := http.NewRequest("POST", s.URL+"/echo", bytes.NewReader(tt.data))
			if tt.coding != "" {
				req.Header.Set("Content-Encoding", tt.coding)
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		s.Close()
		route := "/echo" // a whole body is verified before the mux runs
		if streaming {
			route = "POST /echo"
		}
		want := []string{
			"accepted POST " + route + " stage= wire=5 decoded=5",
			"rejected POST /echo stage=wire limit=1000 observed=1001",
			"rejected POST " + route + " stage=decoded limit=1000 observed=1001",
			"busy POST " + route + " stage=inflight",
			"accepted POST " + route + " stage= wire=32 decoded=32",
			// The cap's request is the one the mux saw: it has the pattern.
			"response_breach POST POST /echo stage=response limit=10 observed=32",
		}
		mu.Lock()
		for i, g := range got {
			if strings.HasPrefix(g, "busy") {
				got[i] = g[:strings.Index(g, " limit=")] // the zstd state's size is the decoder's
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("streaming %v: outcomes\n%s\nwant\n%s", streaming, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		mu.Unlock()
	}
}

// TestObserveReportsBodyOfAbortedStream pins the trap of an outcome lost
// to a panic: in streaming mode the body's outcome is known only once the
// handler returns, and a response aborted by the cap (a panic with
// http.ErrAbortHandler, the ordinary way a response over the cap ends once
// something was sent) or by the handler itself must still report the body
// it read to its verified end, once.
func TestObserveReportsBodyOfAbortedStream(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	mw := mustMW(t, boundhttp.MiddlewareConfig{
		Streaming:        true,
		MaxResponseBytes: 10,
		InFlight:         limits.NewInFlight(1 << 20),
		Observe: func(o boundhttp.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, fmt.Sprintf("%s stage=%s wire=%d", o.Kind, o.Stage(), o.Usage.WireBytes))
		}})
	served := make(chan struct{}, 1)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		w.Write([]byte("12345"))
		http.NewResponseController(w).Flush()
		w.Write([]byte("more than the cap has room for")) // the cap aborts on return
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { served <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	defer s.Close()
	if resp, err := http.Post(s.URL, "text/plain", strings.NewReader("short")); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	<-served
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(got)
	want := []string{"accepted stage= wire=5", "response_breach stage=response wire=0"}
	if !slices.Equal(got, want) {
		t.Errorf("outcomes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
