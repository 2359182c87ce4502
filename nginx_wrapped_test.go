package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// statusRecorder is the ordinary logging or metrics wrapper: it embeds the
// writer and records the status, and has no Unwrap, so nothing that walks
// Unwrap ([http.ResponseController], net/http's linger) reaches the
// server's own writer through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// recorded wraps h in a statusRecorder, as a logging middleware does.
func recorded(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&statusRecorder{ResponseWriter: w}, r)
	})
}

// rejectionCase is one kind of rejection the Middleware answers before the
// handler, with the configuration that provokes it for every body size.
type rejectionCase struct {
	status int
	cfg    func() boundhttp.MiddlewareConfig
	header map[string]string
}

var rejectionCases = []rejectionCase{
	{413, func() boundhttp.MiddlewareConfig {
		return boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 512 << 10}}
	}, nil},
	{503, func() boundhttp.MiddlewareConfig {
		return boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20},
			InFlight: limits.NewInFlight(256 << 10)}
	}, nil},
	// A timeout shorter than any read: the first read ends it.
	{408, func() boundhttp.MiddlewareConfig {
		return boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20, Timeout: time.Nanosecond}}
	}, nil},
	{415, func() boundhttp.MiddlewareConfig {
		return boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20}, Codings: []string{}}
	}, map[string]string{"Content-Encoding": "gzip"}},
	// Text labelled gzip: malformed at its first bytes.
	{400, func() boundhttp.MiddlewareConfig {
		return boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20}}
	}, map[string]string{"Content-Encoding": "gzip"}},
}

// outerWrappers are what commonly sits outside the Middleware and hides
// net/http's writer: a recorder without Unwrap, and http.TimeoutHandler,
// which buffers the answer until the handler returns.
var outerWrappers = []struct {
	name string
	wrap func(http.Handler) http.Handler
}{
	{"recorder", recorded},
	{"TimeoutHandler", func(h http.Handler) http.Handler { return http.TimeoutHandler(h, time.Minute, "handler timeout") }},
}

// TestNginxRelaysRejectionThroughOuterWrapper pins the trap of a fix that
// depends on what wraps the Middleware: behind nginx's default proxy
// config (HTTP/1.0 upstream, Connection: close), every rejection must reach
// the client as itself, not as nginx's 502, whether the Middleware sits
// inside a status recorder without Unwrap or inside http.TimeoutHandler,
// for bodies of 1 MiB and 16 MiB that stay mostly unread.
func TestNginxRelaysRejectionThroughOuterWrapper(t *testing.T) {
	t.Parallel()
	tries := 40
	if testing.Short() {
		tries = 4
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "accepted")
	})
	var locations strings.Builder
	for _, ow := range outerWrappers {
		for _, rc := range rejectionCases {
			mw, err := boundhttp.NewMiddleware(rc.cfg())
			if err != nil {
				t.Fatal(err)
			}
			s := httptest.NewServer(ow.wrap(mw(handler)))
			t.Cleanup(s.Close)
			fmt.Fprintf(&locations, "location /%s/%d/ { proxy_pass %s; }\n", ow.name, rc.status, s.URL)
		}
	}
	base := runNginx(t, "", "client_max_body_size 32m;\n"+locations.String())

	sizes := []int{1 << 20, 16 << 20}
	data := text(16 << 20)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}, Timeout: time.Minute}
	defer c.CloseIdleConnections()
	var cells []testenc.SweepCell
	for _, ow := range outerWrappers {
		for _, rc := range rejectionCases {
			for _, size := range sizes {
				cells = append(cells, testenc.SweepCell{Name: fmt.Sprintf("%s %d %d MiB", ow.name, rc.status, size>>20), Want: rc.status,
					Send: func() (*http.Response, error) {
						req, _ := http.NewRequest("POST", fmt.Sprintf("%s/%s/%d/", base, ow.name, rc.status), bytes.NewReader(data[:size]))
						for h, v := range rc.header {
							req.Header.Set(h, v)
						}
						return c.Do(req)
					}})
			}
		}
	}
	// Every rejection as itself, never nginx's 502.
	testenc.StatusSweep(t, tries, cells)
}
