package boundhttp_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHTTP2 runs the decoded boundary over HTTP/2 (TLS, loopback), where
// bodies arrive as DATA frames, on both sides.
func TestHTTP2(t *testing.T) {
	t.Parallel()
	const limit = 40000
	b := limits.Budget{MaxDecodedBytes: limit}
	var handlerGot []byte
	var proto string
	mw := boundhttp.Middleware(b)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				proto = r.Proto
				handlerGot, _ = io.ReadAll(r.Body)
			})).ServeHTTP(w, r)
			return
		}
		n := limit
		if r.URL.Path == "/over" {
			n++
		}
		serve(w, body{coding: "zstd", data: encode("zstd", text(n)), chunked: true})
	}))
	s.EnableHTTP2 = true
	s.StartTLS()
	defer s.Close()
	tr := &boundhttp.Transport{Base: s.Client().Transport, Budget: b}
	resp, got, err := get(t, tr, s.URL+"/at")
	if err != nil || !bytes.Equal(got, text(limit)) || resp.ProtoMajor != 2 {
		t.Fatalf("HTTP/2 GET at the limit: %d bytes, %v, proto %v; want %d bytes over HTTP/2", len(got), err, resp, limit)
	}
	if _, _, err := get(t, tr, s.URL+"/over"); stageOf(err) != "decoded" {
		t.Errorf("HTTP/2 GET one over: %v, want stage decoded", err)
	}
	for _, tt := range []struct {
		n      int
		status int
	}{{limit, 200}, {limit + 1, 413}} {
		handlerGot = nil
		req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(encode("br", text(tt.n))))
		req.Header.Set("Content-Encoding", "br")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status || (tt.status == 200 && (len(handlerGot) != tt.n || proto != "HTTP/2.0")) {
			t.Errorf("HTTP/2 POST of %d: status %d, handler got %d bytes over %s; want %d", tt.n, resp.StatusCode, len(handlerGot), proto, tt.status)
		}
	}
}

// TestHTTP2RejectionRefusesOnlyTheStream pins the trap of Connection: close
// on HTTP/2, where Go's server turns it into GOAWAY for the whole
// connection: an oversized request multiplexed with a slow ordinary one must
// fail alone; the ordinary one completes and the connection is reused.
func TestHTTP2RejectionRefusesOnlyTheStream(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	s := httptest.NewUnstartedServer(boundhttp.Middleware(proxyBudget)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		w.Write([]byte(r.Proto + " " + string(rune('0'+len(data)%10))))
	})))
	s.EnableHTTP2 = true
	s.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.StartTLS()
	defer s.Close()
	c := s.Client()

	// The slow request: its body arrives in two parts, the oversized
	// request between them.
	pr, pw := io.Pipe()
	slow, _ := http.NewRequest("POST", s.URL, pr)
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Do(slow)
		done <- result{resp, err}
	}()
	pw.Write(text(1000))

	big, _ := http.NewRequest("POST", s.URL, bytes.NewReader(text(700<<10)))
	resp, err := c.Do(big)
	if err != nil {
		t.Fatalf("oversized request: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || resp.ProtoMajor != 2 {
		t.Errorf("oversized request: %s %s, want 413 over HTTP/2", resp.Proto, resp.Status)
	}

	pw.Write(text(1000))
	pw.Close()
	res := <-done
	if res.err != nil {
		t.Fatalf("slow request beside the rejection: %v", res.err)
	}
	got, err := io.ReadAll(res.resp.Body)
	res.resp.Body.Close()
	if err != nil || res.resp.StatusCode != 200 || string(got) != "HTTP/2.0 0" {
		t.Errorf("slow request beside the rejection: %d %q %v, want 200 %q", res.resp.StatusCode, got, err, "HTTP/2.0 0")
	}

	resp, err = c.Post(s.URL, "text/plain", bytes.NewReader(text(10)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := conns.Load(); n != 1 || resp.StatusCode != 200 {
		t.Errorf("after the rejection: %d connections, status %d; want the one connection reused, 200", n, resp.StatusCode)
	}
}

// TestHTTP2StalledWholeBodyAnswered408 (trap: a deadline that reaches an
// HTTP/1 connection but not an HTTP/2 stream): a whole body's stalled
// read is ended at Budget.Timeout by a read deadline set in the past from
// another goroutine than the handler's, which on HTTP/2 closes only the
// stream's body. The client gets 408 stage timeout, over h2c and TLS, and
// its next request on the same connection is served.
func TestHTTP2StalledWholeBodyAnswered408(t *testing.T) {
	t.Parallel()
	for _, useTLS := range []bool{false, true} {
		mw := mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: 100 * time.Millisecond}})
		var conns atomic.Int32
		s := httptest.NewUnstartedServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Proto+" "+string(data))
		})))
		s.Config.ConnState = func(c net.Conn, st http.ConnState) {
			if st == http.StateNew {
				conns.Add(1)
			}
		}
		c := &http.Client{Timeout: 8 * time.Second} // the client's patience
		if useTLS {
			s.EnableHTTP2 = true
			s.StartTLS()
			c.Transport = s.Client().Transport
		} else {
			s.Config.Protocols = new(http.Protocols)
			s.Config.Protocols.SetUnencryptedHTTP2(true)
			s.Start()
			tr := &http.Transport{Protocols: new(http.Protocols)}
			tr.Protocols.SetUnencryptedHTTP2(true)
			c.Transport = tr
		}
		t.Cleanup(s.Close)
		pr, pw := io.Pipe()
		go pw.Write([]byte("first bytes")) // then nothing
		req, _ := http.NewRequest("POST", s.URL, pr)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("TLS %v: stalled body: %v", useTLS, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		pw.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusRequestTimeout || problem(t, string(answer)).Stage != "timeout" {
			t.Errorf("TLS %v: stalled body: %s %d %s, want 408 stage timeout over HTTP/2", useTLS, resp.Proto, resp.StatusCode, answer)
		}
		resp, err = c.Post(s.URL, "text/plain", strings.NewReader("next"))
		if err != nil {
			t.Fatalf("TLS %v: next request: %v", useTLS, err)
		}
		answer, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(answer) != "HTTP/2.0 next" || conns.Load() != 1 {
			t.Errorf("TLS %v: next request: %d %q on %d connections, want 200 %q on the one connection", useTLS, resp.StatusCode, answer, conns.Load(), "HTTP/2.0 next")
		}
	}
}
