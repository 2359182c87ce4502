package boundhttp_test

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestMaxInt64BudgetWorksEndToEnd pins issue 8 item 1 at the root:
// Budget{MaxWireBytes: math.MaxInt64} (and MaxDecodedBytes,
// MaxDecodedRunes) panicked with "slice bounds out of range" in
// Transport.RoundTrip and per request in the Middleware. Such a budget is
// valid and gives a working body.
func TestMaxInt64BudgetWorksEndToEnd(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("boundhttp ", 1000)
	for _, b := range []limits.Budget{
		{MaxWireBytes: math.MaxInt64},
		{MaxDecodedBytes: math.MaxInt64},
		{MaxDecodedRunes: math.MaxInt64},
		{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: math.MaxInt64, MaxDecodedRunes: math.MaxInt64, MaxWindowBytes: math.MaxInt64, MaxRatio: math.MaxFloat64},
	} {
		var got []byte
		srv := httptest.NewServer(boundhttp.Middleware(b)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, _ = io.ReadAll(r.Body)
			io.WriteString(w, body)
		})))
		client := &http.Client{Transport: &boundhttp.Transport{Budget: b}}
		resp, err := client.Post(srv.URL, "text/plain", strings.NewReader(body))
		if err != nil {
			t.Errorf("budget %+v: %v", b, err)
			srv.Close()
			continue
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if err != nil || string(out) != body || !bytes.Equal(got, []byte(body)) {
			t.Errorf("budget %+v: response %d bytes, %v; request %d bytes; want %d both ways", b, len(out), err, len(got), len(body))
		}
	}
}
