package boundhttp_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
)

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

// problemOf decodes a problem document, or returns the zero Problem.
func problemOf(s string) boundhttp.Problem {
	var p boundhttp.Problem
	json.Unmarshal([]byte(s), &p)
	return p
}

// rawExchange writes req as is and returns the answer's status and body.
func rawExchange(t *testing.T, addr, req string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", req, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
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
