package boundhttp_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHostileFramingThroughFetch walks framings a hostile server can send,
// byte for byte over raw TCP, through Fetch: interim 1xx responses before
// the real one, trailers, a chunked body whose last chunk never ends, a
// gzip body cut inside its chunk framing, Content-Encoding "identity" and
// repeated codings. A body is either complete and byte-exact or has no body
// bytes in its Result at all.
func TestHostileFramingThroughFetch(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(5000))
	chunked := func(data []byte, end string) string {
		var b bytes.Buffer
		for len(data) > 0 {
			n := min(len(data), 1000)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, data[:n])
			data = data[n:]
		}
		return b.String() + end
	}
	cases := []struct {
		name     string
		resp     string
		complete bool
	}{
		{"100 and 103 before the answer", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + fmt.Sprint(len(gz)) + "\r\n\r\n" + string(gz), true},
		{"chunked gzip with trailers", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n" +
			chunked(gz, "0\r\nX-T: done\r\n\r\n"), true},
		{"last chunk never ends", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(text(5000), "0\r\n"), false},
		{"gzip cut inside the chunk framing", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunked(gz, "")[:len(chunked(gz, ""))-2], false},
		{"identity named", "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 5000\r\n\r\n" + string(text(5000)), true},
		{"gzip on two header lines over one gzip layer", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: gzip\r\nContent-Length: " +
			fmt.Sprint(len(gz)) + "\r\n\r\n" + string(gz), false},
	}
	for _, tc := range cases {
		url := rawConnServer(t, func(c net.Conn, _ *http.Request) { io.WriteString(c, tc.resp) })
		tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 10000}}
		req, _ := http.NewRequest("GET", url, nil)
		res := boundhttp.Fetch(&http.Client{Transport: tr}, req)
		tr.CloseIdleConnections()
		switch {
		case tc.complete && (res.Status != boundhttp.StatusComplete || res.Body != string(text(5000))):
			t.Errorf("%s: %s, %d body bytes (%s %+v); want complete and byte-exact", tc.name, res.Status, len(res.Body), res.Error, res.Rejection)
		case !tc.complete && (res.Complete || res.Body != "" || res.BodyBase64 != ""):
			t.Errorf("%s: %s with %d body bytes; want no body", tc.name, res.Status, len(res.Body)+len(res.BodyBase64))
		}
	}
}

// framingServer runs the middleware (whole or streaming) before a handler
// that counts its calls, wrapped in outer, on a server speaking HTTP/1.1
// and unencrypted HTTP/2.
func framingServer(t *testing.T, streaming bool, outer func(http.Handler) http.Handler) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: proxyBudget, Streaming: streaming})
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return // streaming: the middleware answers
		}
		calls.Add(1)
		io.WriteString(w, "handled")
	}))
	if outer != nil {
		h = outer(h)
	}
	s := httptest.NewUnstartedServer(h)
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	return s, calls
}

// TestMalformedFramingNotAnswered200 pins the trap of returning without
// writing when the server's body reader fails: net/http then sends 200 OK
// for a request no handler saw. A bad chunk size and an HTTP/2 stream whose
// DATA disagrees with its content-length are integrity failures (400); a
// body cut by an outer http.MaxBytesHandler is too large (413, stage wire,
// that handler's limit).
func TestMalformedFramingNotAnswered200(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		mode := map[bool]string{false: "whole", true: "streaming"}[streaming]

		s, calls := framingServer(t, streaming, nil)
		status, answer := rawExchange(t, s.Listener.Addr().String(),
			"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
		if p := problemOf(answer); status != 400 || p.Stage != "integrity" || calls.Load() != 0 {
			t.Errorf("%s, bad chunk size: %d %q, handler called %d times; want 400 integrity, not called", mode, status, answer, calls.Load())
		}

		status, answer = h2cShortBody(t, s.Listener.Addr().String())
		if p := problemOf(answer); status != 400 || p.Stage != "integrity" || calls.Load() != 0 {
			t.Errorf("%s, h2c content-length 10 with 5 bytes of DATA: %d %q, handler called %d times; want 400 integrity, not called", mode, status, answer, calls.Load())
		}

		s, calls = framingServer(t, streaming, func(h http.Handler) http.Handler { return http.MaxBytesHandler(h, 1000) })
		resp, err := http.Post(s.URL, "text/plain", struct{ io.Reader }{bytes.NewReader(text(2000))})
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if p := problemOf(string(data)); resp.StatusCode != 413 || p.Stage != "wire" || p.Limit != 1000 || calls.Load() != 0 {
			t.Errorf("%s, chunked 2000 bytes under MaxBytesHandler(1000): %d %q, handler called %d times; want 413 wire limit 1000", mode, resp.StatusCode, data, calls.Load())
		}
	}
}

// h2cShortBody opens an unencrypted HTTP/2 connection with prior knowledge,
// sends a POST declaring content-length 10 and ending its stream after 5
// bytes of DATA, and returns the answer's status (from the static HPACK
// table, 0 if sent another way) and DATA.
func h2cShortBody(t *testing.T, addr string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	frame := func(typ, flags byte, stream uint32, payload []byte) []byte {
		h := []byte{byte(len(payload) >> 16), byte(len(payload) >> 8), byte(len(payload)), typ, flags, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(h[5:], stream)
		return append(h, payload...)
	}
	var block []byte // HPACK literals without indexing, new names
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/"}, {":authority", "x"}, {"content-length", "10"}} {
		block = append(block, 0, byte(len(f[0])))
		block = append(block, f[0]...)
		block = append(block, byte(len(f[1])))
		block = append(block, f[1]...)
	}
	var out bytes.Buffer
	out.WriteString("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	out.Write(frame(4, 0, 0, nil))             // SETTINGS
	out.Write(frame(1, 4, 1, block))           // HEADERS, END_HEADERS
	out.Write(frame(0, 1, 1, []byte("12345"))) // DATA, END_STREAM
	if _, err := c.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}
	staticStatus := map[byte]int{0x88: 200, 0x89: 204, 0x8a: 206, 0x8b: 304, 0x8c: 400, 0x8d: 404, 0x8e: 500}
	br := bufio.NewReader(c)
	status := 0
	var data strings.Builder
	for range 100 {
		var h [9]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			t.Fatalf("h2c: reading a frame: %v (status %d, data %q)", err, status, data.String())
		}
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		typ, flags, stream := h[3], h[4], binary.BigEndian.Uint32(h[5:])&0x7fffffff
		payload := make([]byte, n)
		if _, err := io.ReadFull(br, payload); err != nil {
			t.Fatal(err)
		}
		switch {
		case typ == 4 && flags&1 == 0: // SETTINGS: acknowledge
			c.Write(frame(4, 1, 0, nil))
		case typ == 1 && stream == 1 && n > 0: // HEADERS: the status comes first
			status = staticStatus[payload[0]]
		case typ == 0 && stream == 1:
			data.Write(payload)
		case typ == 3 && stream == 1, typ == 7: // RST_STREAM, GOAWAY
			return status, data.String()
		}
		if (typ == 0 || typ == 1) && stream == 1 && flags&1 != 0 { // END_STREAM
			return status, data.String()
		}
	}
	t.Fatal("h2c: no end of stream in 100 frames")
	return 0, ""
}

// TestStreamingBreachAnswerKeepsItsFraming: in streaming mode a handler may
// set the headers of the answer it means to give (a length, a coding)
// before it reads. When a breach ends the body and the handler returns
// without writing, the middleware's problem document must not go out under
// them: a Content-Length of the handler's cut the document short and a
// Content-Encoding labelled it gzip. Headers set before the middleware
// ran stay.
func TestStreamingBreachAnswerKeepsItsFraming(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxWireBytes: 10}})
	if err != nil {
		t.Fatal(err)
	}
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "7")
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Range", "bytes 0-6/7")
		io.ReadAll(r.Body)
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Origin")
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	req, _ := http.NewRequest("POST", s.URL, struct{ io.Reader }{strings.NewReader(strings.Repeat("x", 100))})
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var p boundhttp.Problem
	if err != nil || resp.StatusCode != 413 || json.Unmarshal(answer, &p) != nil || p.Stage != "wire" {
		t.Errorf("breach after the handler set its headers: %d %q (%v), want 413 and a problem of stage wire", resp.StatusCode, answer, err)
	}
	for _, k := range []string{"Content-Encoding", "Content-Range"} {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("problem answered with the handler's %s: %q", k, v)
		}
	}
	if v := resp.Header.Get("Vary"); v != "Origin" {
		t.Errorf("problem answered without the outer handler's Vary: %q", v)
	}
}

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
