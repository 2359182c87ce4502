package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestLazyRedirectBodyGivesBackInFlight: a redirect body verified lazily
// holds its InFlight charge only while it is held: followed by http.Client,
// read by a caller who stopped at the redirect, or closed unread, the charge
// goes back.
func TestLazyRedirectBodyGivesBackInFlight(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/final")
		serve(w, body{coding: "zstd", data: encode("zstd", text(300000)), status: http.StatusFound})
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "final") })
	s := httptest.NewServer(mux)
	defer s.Close()
	f := limits.NewInFlight(64 << 20)
	tr := &boundhttp.Transport{InFlight: f}
	defer tr.CloseIdleConnections()
	stop := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		name   string
		client *http.Client
		read   bool
	}{{"followed", &http.Client{Transport: tr}, true}, {"read", stop, true}, {"closed unread", stop, false}} {
		resp, err := tt.client.Get(s.URL + "/redirect")
		if err != nil {
			t.Fatal(err)
		}
		if tt.read {
			io.ReadAll(resp.Body)
		}
		resp.Body.Close()
		if n := f.InUse(); n != 0 {
			t.Errorf("redirect %s: InUse() = %d after Close, want 0", tt.name, n)
		}
	}
}
