// Command metrics shows the Middleware's outcomes counted by Prometheus:
// one line of wiring (MiddlewareConfig.Observe) turns every accepted,
// rejected and busy request body, and every response over the cap, into
// counters by outcome, stage and route, and the accepted bodies' sizes into
// a histogram. It serves on loopback, sends a few bodies, and prints what a
// scrape of /metrics returns.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// metrics are the collectors the outcomes feed.
type metrics struct {
	bodies  *prometheus.CounterVec
	decoded prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		bodies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "boundhttp_outcomes_total",
			Help: "Request bodies and capped responses by outcome (accepted, rejected, busy, response_breach), stage and route.",
		}, []string{"outcome", "stage", "route"}),
		decoded: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "boundhttp_accepted_decoded_bytes",
			Help:    "Decoded size of accepted request bodies.",
			Buckets: prometheus.ExponentialBuckets(1024, 4, 8),
		}),
	}
	reg.MustRegister(m.bodies, m.decoded)
	return m
}

// observe is the hook: the one line of wiring is MiddlewareConfig{Observe:
// m.observe}.
func (m *metrics) observe(o boundhttp.Outcome) {
	m.bodies.WithLabelValues(string(o.Kind), string(o.Stage()), o.Route).Inc()
	if o.Kind == boundhttp.OutcomeAccepted {
		m.decoded.Observe(float64(o.Usage.DecodedBytes))
	}
}

// server returns the application: a JSON endpoint behind the Middleware,
// and /metrics.
func server(reg *prometheus.Registry) (http.Handler, error) {
	m := newMetrics(reg)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget:           limits.Budget{MaxWireBytes: 64 << 10, MaxDecodedBytes: 256 << 10},
		JSONAlways:       true,
		MaxResponseBytes: 1 << 10,
		Observe:          m.observe,
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST /tools", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("long") {
			w.Write(bytes.Repeat([]byte("x"), 2<<10)) // over the response cap
			return
		}
		io.WriteString(w, `{"ok":true}`)
	})))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux, nil
}

// run serves on loopback, sends one body of each outcome and writes the
// scrape's boundhttp lines to w.
func run(w io.Writer) error {
	reg := prometheus.NewRegistry()
	h, err := server(reg)
	if err != nil {
		return err
	}
	s := httptest.NewUnstartedServer(h)
	s.Config.ReadHeaderTimeout = 10 * time.Second
	s.Start()
	defer s.Close()
	for _, body := range []struct {
		path, coding string
		data         []byte
	}{
		{"/tools", "", []byte(`{"name":"count","arguments":{"n":3}}`)},
		{"/tools", "", bytes.Repeat([]byte(" "), 100<<10)},            // wire
		{"/tools", "gzip", gzipped(bytes.Repeat([]byte(" "), 1<<20))}, // decoded
		{"/tools", "", []byte("not json")},                            // integrity
		{"/tools?long", "", []byte(`{}`)},                             // response
	} {
		req, _ := http.NewRequest("POST", s.URL+body.path, bytes.NewReader(body.data))
		if body.coding != "" {
			req.Header.Set("Content-Encoding", body.coding)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "boundhttp_outcomes_total") || strings.HasPrefix(line, "boundhttp_accepted_decoded_bytes_count") {
			fmt.Fprintln(w, line)
		}
	}
	return sc.Err()
}

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}
