package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestBoundaryOnEveryPath walks "the same boundary as the Middleware"
// through every way a caller gets a body: whole-body RoundTrip, streaming,
// a redirect kept with ErrUseLastResponse (verified on first read), an
// error status, and the agent results Fetch and Preview (with n =
// MaxInt64). Exactly N decoded bytes pass complete and byte-exact; N+1 fail
// with stage decoded, on every path and for every coding.
func TestBoundaryOnEveryPath(t *testing.T) {
	t.Parallel()
	const limit = 3000
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		status, _ := strconv.Atoi(r.URL.Query().Get("status"))
		if status == http.StatusFound {
			w.Header().Set("Location", "/elsewhere")
		}
		c := r.URL.Query().Get("c")
		serve(w, body{coding: c, data: encode(c, text(n)), chunked: r.URL.Query().Has("chunked"), status: status})
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: limit}}
	defer tr.CloseIdleConnections()
	keep := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	paths := []struct {
		name   string
		status int
		fetch  func(url string) (data []byte, complete bool, err error)
	}{
		{"whole", 200, viaClient(keep, false)},
		{"streaming", 200, viaClient(keep, true)},
		{"redirect kept", 302, viaClient(keep, false)},
		{"error status", 503, viaClient(keep, false)},
		{"Fetch", 200, viaResult(func(r *http.Request) boundhttp.Result { return boundhttp.Fetch(keep, r) })},
		{"Fetch redirect kept", 302, viaResult(func(r *http.Request) boundhttp.Result { return boundhttp.Fetch(keep, r) })},
		{"Preview MaxInt64", 200, viaResult(func(r *http.Request) boundhttp.Result { return boundhttp.Preview(keep, r, math.MaxInt64) })},
	}
	for _, p := range paths {
		for _, c := range codings {
			for _, chunked := range []bool{false, true} {
				for _, n := range []int{limit, limit + 1} {
					url := fmt.Sprintf("%s/?c=%s&n=%d&status=%d", s.URL, c, n, p.status)
					if chunked {
						url += "&chunked"
					}
					data, complete, err := p.fetch(url)
					name := fmt.Sprintf("%s %s chunked=%v n=%d", p.name, c, chunked, n)
					switch {
					case n == limit && (err != nil || !bytes.Equal(data, text(n))):
						t.Errorf("%s: %d bytes, %v; want the whole body", name, len(data), err)
					case n == limit && !complete && p.name != "Preview MaxInt64":
						t.Errorf("%s: not reported complete", name)
					case n > limit && stageOf(err) != "decoded":
						t.Errorf("%s: %d bytes, %v; want stage decoded", name, len(data), err)
					}
				}
			}
		}
	}
}

// viaClient fetches url with client and reads the body whole.
func viaClient(client *http.Client, streaming bool) func(string) ([]byte, bool, error) {
	return func(url string) ([]byte, bool, error) {
		req, _ := http.NewRequest("GET", url, nil)
		if streaming {
			req = req.WithContext(boundhttp.WithStreaming(req.Context()))
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, false, err
		}
		defer resp.Body.Close()
		var buf bytes.Buffer
		_, err = buf.ReadFrom(resp.Body)
		_, done := boundhttp.UsageOf(resp)
		return buf.Bytes(), done, err
	}
}

// viaResult fetches url with f and turns its Result back into bytes and an
// error carrying the rejection's stage.
func viaResult(f func(*http.Request) boundhttp.Result) func(string) ([]byte, bool, error) {
	return func(url string) ([]byte, bool, error) {
		req, _ := http.NewRequest("GET", url, nil)
		r := f(req)
		switch {
		case r.Rejection != nil:
			return nil, false, &limits.Error{Stage: r.Rejection.Stage}
		case r.Status == boundhttp.StatusFailed:
			return nil, false, fmt.Errorf("failed: %s", r.Error)
		}
		return []byte(r.Body), r.Complete, nil
	}
}

// TestMaxInt64BudgetWorksEndToEnd pins the trap "arithmetic on limits"
// (limit+1 overflows at math.MaxInt64) at the root: Budget{MaxWireBytes:
// math.MaxInt64} (and MaxDecodedBytes, MaxDecodedRunes) panicked with "slice
// bounds out of range" in Transport.RoundTrip and per request in the
// Middleware. Such a budget is valid and gives a working body.
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
