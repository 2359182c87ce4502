package boundhttp_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestUsageOfRejectedJSONStream (trap: a result that does not tell the
// truth): a streamed JSON body whose document is cut short, or too deep,
// where the body ends is rejected by the shape check on its last Read, but
// UsageOf kept reporting it as read to its verified end, because the body
// underneath the check had recorded its end before the check ran.
func TestUsageOfRejectedJSONStream(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"truncated": `{"a": [1, 2, `,
		"too deep":  `[[[[[[[[[[1]]]]]]]]]]`,
	}
	for name, doc := range docs {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, doc)
		}))
		tr := &boundhttp.Transport{Streaming: true, JSON: &limits.JSON{MaxDepth: 4}}
		resp, err := (&http.Client{Transport: tr}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		var le *limits.Error
		if !errors.As(err, &le) {
			t.Errorf("%s: ReadAll: %v; want a *limits.Error", name, err)
		}
		if _, done := boundhttp.UsageOf(resp); done {
			t.Errorf("%s: UsageOf reports a verified end for a body the JSON check rejected (%v)", name, err)
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
		s.Close()
	}
}

// TestUsageOfRejectedJSONKeptRedirect: the same for the body of a redirect
// kept with ErrUseLastResponse, verified whole on its first Read: the body
// reached its verified end, then the JSON check rejected it, and UsageOf
// kept reporting the verified end.
func TestUsageOfRejectedJSONKeptRedirect(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
		io.WriteString(w, `{"a": [1, 2, `)
	}))
	defer s.Close()
	tr := &boundhttp.Transport{JSON: &limits.JSON{MaxDepth: 4}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	var le *limits.Error
	if !errors.As(err, &le) {
		t.Errorf("ReadAll: %v; want a *limits.Error", err)
	}
	if _, done := boundhttp.UsageOf(resp); done {
		t.Errorf("UsageOf reports a verified end for a body the JSON check rejected (%v)", err)
	}
}
