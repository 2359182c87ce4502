package honest

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
)

// TestFanOut (client side): many concurrent fetches to many hosts on the
// default budget, as a crawler or an agent's fetch tool makes them: 20
// servers, 200 concurrent GETs of 64 KiB, half gzip-coded (when the
// request accepts gzip, as both clients' do) and half identity, through
// one client: a Transport with the default Budget (and default InFlight)
// for ours. 1 round of 200 (-short), 3 (default), 20 (-honest.long).
func TestFanOut(t *testing.T) {
	const hosts, fetches, size = 20, 200, 64 << 10
	rounds := pick(1, 3, 20)
	bodies := make([][]byte, hosts)
	gzipped := make([][]byte, hosts)
	for i := range hosts {
		bodies[i] = text(100+i, size)
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(bodies[i])
		zw.Close()
		gzipped[i] = b.Bytes()
	}
	for _, p := range allProtos {
		t.Run(p.name, func(t *testing.T) {
			var ctrl outcome
			if !t.Run(stock.name, func(t *testing.T) {
				ctrl = fanOut(t, p, false, bodies, gzipped, fetches, rounds)
				if msg := ctrl.failure(p); msg != "" {
					t.Fatalf("the control (stock net/http) failed, so the workload is wrong, not the library: %s", msg)
				}
			}) {
				return
			}
			t.Run("ours-client", func(t *testing.T) {
				got := fanOut(t, p, true, bodies, gzipped, fetches, rounds)
				workload{}.compare(t, ctrl, got)
			})
		})
	}
}

// fanOut runs the fetches against hosts fresh servers over p.
func fanOut(t *testing.T, p proto, ours bool, bodies, gzipped [][]byte, fetches, rounds int) outcome {
	t.Helper()
	srvs := make([]*httptest.Server, len(bodies))
	var cert *x509.Certificate
	for i := range bodies {
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Vary", "Accept-Encoding")
			data := bodies[i]
			if strings.HasPrefix(r.URL.Path, "/gzip/") && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				w.Header().Set("Content-Encoding", "gzip")
				data = gzipped[i]
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data)
		}))
		startServer(p, srv)
		defer srv.Close()
		srvs[i] = srv
		cert = srv.Certificate()
	}
	base := baseTransport(ours, p, cert)
	defer base.CloseIdleConnections()
	var rt http.RoundTripper = base
	if ours {
		rt = &boundhttp.Transport{Base: base} // the default Budget and InFlight
	}
	client := &http.Client{Transport: rt, Timeout: 2 * time.Minute}
	o := outcome{ex: make([]exchange, fetches*rounds)}
	start := time.Now()
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range fetches {
			wg.Go(func() {
				host := i % len(srvs)
				coding := "identity"
				if i%2 == 0 {
					coding = "gzip"
				}
				url := fmt.Sprintf("%s/%s/%d", srvs[host].URL, coding, i)
				x := exchange{}
				resp, err := client.Get(url)
				if err != nil {
					x.err = strings.ReplaceAll(err.Error(), srvs[host].URL, "URL")
				} else {
					x = readAnswer(resp, func(s string) string { return strings.ReplaceAll(s, srvs[host].URL, "URL") })
					resp.Body.Close()
					x.extra = fmt.Sprintf("uncompressed %v", resp.Uncompressed)
					if x.err == "" && resp.Uncompressed != (coding == "gzip") {
						x.err = fmt.Sprintf("%s body: Uncompressed is %v", coding, resp.Uncompressed)
					}
					if x.err == "" && x.sum != sumOf(bodies[host]) {
						x.err = fmt.Sprintf("host %d %s: %d bytes, sha256 %.16s; want %d bytes, %.16s", host, coding, x.n, x.sum, len(bodies[host]), sumOf(bodies[host]))
					}
				}
				o.ex[round*fetches+i] = x
			})
		}
		wg.Wait()
	}
	o.elapsed = time.Since(start)
	return o
}
