package boundhttp_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// TestTransportInvalidConfigFailsBeforeSending (trap: configuration
// checked after I/O): a Transport with an invalid Budget, JSON or
// DecodeOptions fails every request before any byte leaves the process (the
// loopback server never sees the request, not even a POST's body), with the
// same error every time; a per-request budget from WithBudget is checked
// per request, also before sending. Sabotage: applying DecodeOptions only
// when the body is opened (as before) let the server receive and handle
// the POST, then returned the option's error.
func TestTransportInvalidConfigFailsBeforeSending(t *testing.T) {
	t.Parallel()
	var seen atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen.Add(1) }))
	defer s.Close()
	for _, tt := range []struct {
		name string
		tr   *boundhttp.Transport
	}{
		{"negative budget", &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: -1}}},
		{"negative JSON limit", &boundhttp.Transport{JSON: &limits.JSON{MaxDepth: -1}}},
		{"negative WithMaxMembers", &boundhttp.Transport{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(-1)}}},
		{"MinInt WithMaxMembers", &boundhttp.Transport{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(math.MinInt)}}},
	} {
		var first error
		for i := range 3 {
			closed := false
			req, _ := http.NewRequest("POST", s.URL, &closeRecorder{Reader: strings.NewReader("payload"), closed: &closed})
			resp, err := tt.tr.RoundTrip(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s: request %d succeeded", tt.name, i)
			}
			if i == 0 {
				first = err
			} else if err != first {
				t.Errorf("%s: request %d failed with %v, want the same error as the first (%v)", tt.name, i, err, first)
			}
			if !closed {
				t.Errorf("%s: the request body was not closed", tt.name)
			}
		}
		tt.tr.CloseIdleConnections()
	}
	// A valid Transport, a per-request budget that is not.
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	for _, b := range []limits.Budget{{MaxDecodedBytes: -1}, {MaxLayers: -1}, {MaxRatio: -1}} {
		req, _ := http.NewRequestWithContext(boundhttp.WithBudget(t.Context(), b), "POST", s.URL, strings.NewReader("payload"))
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Errorf("WithBudget(%+v): request succeeded, want the budget's error", b)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Fatalf("the server saw %d requests, want none", n)
	}
	// And the valid Transport still sends valid requests.
	req, _ := http.NewRequest("GET", s.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := seen.Load(); n != 1 {
		t.Fatalf("the server saw %d requests, want 1", n)
	}
}

// closeRecorder is a request body that records its Close.
type closeRecorder struct {
	*strings.Reader
	closed *bool
}

func (c *closeRecorder) Close() error {
	*c.closed = true
	return nil
}

// TestTransportFieldsChangedAfterFirstUse (trap: a configuration checked
// once and read again unchecked): the Transport checks Budget and JSON at
// its first request. A field changed afterwards (the documentation forbids
// it, nothing prevents it), or a JSON limits value changed through the
// pointer the Transport was given, must never reach the decoder unchecked:
// a negative MaxWireBytes made the wire reader slice past its buffer (a
// panic), and a JSON checker whose Reset refused the changed limits kept the
// state of the previous body it checked. The Transport goes on with the
// configuration it checked.
func TestTransportFieldsChangedAfterFirstUse(t *testing.T) {
	t.Parallel()
	doc := []byte(`[[1,2],[3]]`)
	s := server(t, body{data: doc, chunked: true})
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		serve(w, body{data: doc, chunked: true})
	})
	for _, streaming := range []bool{false, true} {
		j := &limits.JSON{MaxDepth: 2}
		tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 100}, JSON: j, Streaming: streaming}
		get := func() ([]byte, error) {
			req, _ := http.NewRequest("GET", s.URL, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			return io.ReadAll(resp.Body)
		}
		if got, err := get(); err != nil || string(got) != string(doc) {
			t.Fatalf("streaming %v: first request: %q, %v", streaming, got, err)
		}
		tr.Budget.MaxWireBytes = -1
		tr.Budget.MaxDecodedBytes = -5
		j.MaxDepth = -1
		for i := range 3 {
			var got []byte
			var err error
			if readPanics(func() { got, err = get() }) {
				t.Fatalf("streaming %v: request %d after the change panicked", streaming, i)
			}
			if err != nil || string(got) != string(doc) {
				t.Errorf("streaming %v: request %d after the change: %q, %v; want the body, under the checked configuration", streaming, i, got, err)
			}
		}
		tr.CloseIdleConnections()
	}
}
