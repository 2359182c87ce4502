package boundhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// framedServer starts an HTTP/2 server (h2c, or TLS) that answers every
// request with a 200 whose body is frames DATA frames of body bytes each,
// padded with pad bytes, within the client's flow-control windows, then
// one byte that ends the stream. It returns the URL and a base transport
// from NewBaseTransport for it.
func framedServer(t *testing.T, useTLS bool, frames, body, pad int) (string, *http.Transport) {
	t.Helper()
	u, pool := testenc.H2Server(t, useTLS, func(c *testenc.H2Conn) {
		id, err := c.NextRequest()
		if err != nil {
			return
		}
		go c.ReadLoop()
		if c.Headers(id, false, ":status", "200", "content-type", "text/plain") != nil {
			return
		}
		p := make([]byte, body)
		for i := range p {
			p[i] = 'x'
		}
		for range frames {
			if c.DataFlow(id, p, pad, false) != nil {
				return
			}
		}
		c.DataFlow(id, []byte("x"), 0, true)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c.Conn) // until the client closes
	})
	if useTLS {
		return u, testenc.H2Client(boundhttp.NewBaseTransport(), pool)
	}
	return u, testenc.H2Client(boundhttp.NewBaseTransport(), nil)
}

// fetchFramed fetches url in whole-body or streaming mode and returns the
// body bytes read, the CPU time the process spent and the error of the
// fetch or of reading the body to its end.
func fetchFramed(t *testing.T, url string, base *http.Transport, streaming bool) (int64, time.Duration, error) {
	t.Helper()
	tr := &boundhttp.Transport{Base: base, Streaming: streaming, Budget: limits.Budget{Timeout: time.Minute}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	cpu0, _ := testenc.CPUTime()
	resp, err := client.Get(url)
	var n int64
	if err == nil {
		n, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cpu1, _ := testenc.CPUTime()
	return n, cpu1 - cpu0, err
}

// TestFramingOverheadIsBounded pins the trap of uncounted framing: HTTP/2
// DATA frames of 1 byte with 255 bytes of padding (266 socket bytes per
// counted byte), and DATA frames with no body at all (socket bytes, CPU
// and no count), over h2c and TLS, in whole-body and streaming mode (which
// has no default timeout). The connection of the default base transport
// fails once it read more than DefaultFramingRatio socket bytes per body
// byte plus DefaultFramingSlack per connection and request: a rejection of
// stage wire, Field "framing", after at most about 2 MiB of socket bytes,
// long before the server's 17 MB (padded) or 9 MB (empty frames) are
// through.
func TestFramingOverheadIsBounded(t *testing.T) {
	t.Parallel()
	frames := map[string][3]int{ // frames, body bytes, padding
		"padded":       {64 << 10, 1, 255},
		"empty frames": {1 << 20, 0, 0},
	}
	if testing.Short() {
		frames["padded"] = [3]int{16 << 10, 1, 255}
		frames["empty frames"] = [3]int{400 << 10, 0, 0}
	}
	for name, f := range frames {
		for _, useTLS := range []bool{false, true} {
			for _, streaming := range []bool{false, true} {
				where := fmt.Sprintf("%s, TLS %v, streaming %v", name, useTLS, streaming)
				u, base := framedServer(t, useTLS, f[0], f[1], f[2])
				n, cpu, err := fetchFramed(t, u, base, streaming)
				t.Logf("%s: %d body bytes, %v CPU (client and server): %v", where, n, cpu, err)
				var le *limits.Error
				if !errors.As(err, &le) || le.Stage != limits.StageWire || le.Field != "framing" {
					t.Errorf("%s: %d body bytes, error %v; want a framing rejection", where, n, err)
					continue
				}
				slack := int64(3 * boundhttp.DefaultFramingSlack) // the connection's, the request's, one read
				if le.Observed > slack+n*boundhttp.DefaultFramingRatio {
					t.Errorf("%s: failed after %d socket bytes for %d body bytes, want at most %d", where, le.Observed, n, slack+n*boundhttp.DefaultFramingRatio)
				}
			}
		}
	}
}

// TestFramingOfHonestServersPasses pins the other side of the framing
// bound: servers that flush every byte of a body on its own (HTTP/2 DATA
// frames of 1 byte, one TLS record each; HTTP/1 chunks of 1 byte) stay
// within DefaultFramingRatio, well past DefaultFramingSlack.
func TestFramingOfHonestServersPasses(t *testing.T) {
	t.Parallel()
	const size = 128 << 10 // 4 MiB of TLS records, twice the slack
	for _, useTLS := range []bool{false, true} {
		u, base := framedServer(t, useTLS, size, 1, 0)
		if n, _, err := fetchFramed(t, u, base, false); err != nil || n != size+1 {
			t.Errorf("1-byte DATA frames, TLS %v: %d bytes, %v; want %d bytes", useTLS, n, err, size+1)
		}
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		for range 64 << 10 {
			w.Write([]byte("x"))
			rc.Flush()
		}
	}))
	defer s.Close()
	if n, _, err := fetchFramed(t, s.URL, boundhttp.NewBaseTransport(), false); err != nil || n != 64<<10 {
		t.Errorf("1-byte chunks: %d bytes, %v; want %d", n, err, 64<<10)
	}
}

// TestUpgradedConnectionHasNoFramingBound pins the edge of the framing
// bound: a connection handed over by a 101 Switching Protocols carries
// another protocol, none of it a body the Transport counts, so 4 MiB
// (twice the slack) pass through it whole.
func TestUpgradedConnectionHasNoFramingBound(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	u := testenc.RawServer(t, func(conn net.Conn, _ *http.Request) {
		io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: bytes\r\n\r\n")
		conn.Write(bytes.Repeat([]byte("x"), size))
	})
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "bytes")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v, %v; want the 101", resp, err)
	}
	defer resp.Body.Close()
	if n, err := io.Copy(io.Discard, resp.Body); n != size || err != nil {
		t.Errorf("read %d bytes of the upgraded connection, %v; want %d", n, err, size)
	}
}
