package boundhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// slowBody returns its bytes and io.EOF in one Read that blocks for delay
// first and does not watch any context: a source that only the clock can
// judge.
type slowBody struct {
	data  []byte
	delay time.Duration
	done  bool
}

func (s *slowBody) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	time.Sleep(s.delay)
	s.done = true
	return copy(p, s.data), io.EOF
}

func (s *slowBody) Close() error { return nil }

// TestTimeoutRunsFromHeaders pins where Budget.Timeout starts on the
// client: at the response headers, so a server that sends its headers and
// then waits before the first body byte is cut off; and a body whose end
// arrives after the deadline is rejected even when its source ignored the
// cancellation.
func TestTimeoutRunsFromHeaders(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(600 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "hello")
	}))
	defer s.Close()
	for _, streaming := range []bool{false, true} {
		tr := &boundhttp.Transport{Streaming: streaming, Budget: limits.Budget{Timeout: 200 * time.Millisecond}}
		if _, _, err := get(t, tr, s.URL); stageOf(err) != "timeout" {
			t.Errorf("headers, then 600 ms before the first byte (streaming %v), timeout 200 ms: %v, want stage timeout", streaming, err)
		}
	}
	// Sources that ignore the cancellation: only the clock can judge them.
	data := []byte("a body that ended too late")
	for _, tt := range []struct {
		streaming bool
		delay     time.Duration // inside the source's only Read
		wait      time.Duration // the caller's, before the first Read
	}{
		{false, 400 * time.Millisecond, 0},
		{true, 400 * time.Millisecond, 0},
		// The decoder's own clock starts at its first Read; the Transport's
		// at the headers.
		{true, 0, 400 * time.Millisecond},
	} {
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: int64(len(data)),
				Body: &slowBody{data: data, delay: tt.delay}}, nil
		})
		tr := &boundhttp.Transport{Base: base, Streaming: tt.streaming, Budget: limits.Budget{Timeout: 100 * time.Millisecond}}
		resp, err := (&http.Client{Transport: tr}).Get("http://example.invalid/")
		var got []byte
		if err == nil {
			time.Sleep(tt.wait)
			got, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if stageOf(err) != "timeout" || bytes.Equal(got, data) && !tt.streaming {
			t.Errorf("body ending %v after the headers (streaming %v, first Read after %v), timeout 100 ms: %q, %v; want stage timeout",
				tt.delay+tt.wait, tt.streaming, tt.wait, got, err)
		}
	}
}

// TestVerifiedEndOutlivesTimeout (trap: a result that stops telling the
// truth): a streamed body read to its verified end within Budget.Timeout
// stays ended. A Read after io.EOF (json.Decoder, bufio and io.Copy loops
// make one) came after the deadline and got a timeout error, and UsageOf
// turned from verified to not verified, for a body that had been delivered
// whole and in time.
func TestVerifiedEndOutlivesTimeout(t *testing.T) {
	url := rawConnServer(t, func(c net.Conn, _ *http.Request) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
		time.Sleep(2 * time.Second) // keep the connection open
	})
	const timeout = 50 * time.Millisecond
	tr := &boundhttp.Transport{Budget: limits.Budget{Timeout: timeout}, Streaming: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || string(data) != "hello" {
		t.Fatalf("ReadAll: %q, %v", data, err)
	}
	if _, done := boundhttp.UsageOf(resp); !done {
		t.Fatal("UsageOf: not verified after io.EOF")
	}
	time.Sleep(3 * timeout)
	for range 2 {
		if n, err := resp.Body.Read(make([]byte, 8)); n != 0 || err != io.EOF {
			t.Errorf("Read after the verified end and the deadline: %d, %v; want 0, io.EOF", n, err)
		}
	}
	if u, done := boundhttp.UsageOf(resp); !done || u.DecodedBytes != 5 {
		t.Errorf("UsageOf after a late Read: %+v, %v; want 5 decoded bytes, verified", u, done)
	}
}

// TestTransportTimeout: a server that drips bytes slowly trips
// Budget.Timeout, and the connection is closed.
func TestTransportTimeout(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{}, 4) // a connection the server saw closed
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		for range 1000 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	s.Start()
	defer s.Close()
	for _, streaming := range []bool{false, true} {
		tr := &boundhttp.Transport{Budget: limits.Budget{Timeout: 200 * time.Millisecond}, Streaming: streaming}
		start := time.Now()
		_, _, err := get(t, tr, s.URL)
		var e *limits.Error
		if !errors.As(err, &e) || e.Stage != limits.StageTimeout || e.Limit != 200 || !errors.Is(err, limits.ErrTimeout) {
			t.Errorf("slow body (streaming %v), timeout 200 ms: %v, want stage timeout", streaming, err)
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("slow body (streaming %v): took %v to time out", streaming, el)
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Errorf("slow body (streaming %v): the connection was not closed after the timeout", streaming)
		}
	}
}

// TestTransportTimeoutStalledBody: a server that sends part of a body and
// then nothing is cut off by Budget.Timeout: only the timer can end a read
// that never returns.
func TestTransportTimeoutStalledBody(t *testing.T) {
	t.Parallel()
	u := rawServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nfirst bytes")
	for _, streaming := range []bool{false, true} {
		start := time.Now()
		_, _, err := get(t, &boundhttp.Transport{Streaming: streaming, Budget: limits.Budget{Timeout: 300 * time.Millisecond}}, u)
		if stageOf(err) != "timeout" {
			t.Errorf("stalled body (streaming %v), timeout 300 ms: %v, want stage timeout", streaming, err)
		}
		if el := time.Since(start); el > 3*time.Second {
			t.Errorf("stalled body (streaming %v): took %v", streaming, el)
		}
	}
}

// TestMiddlewareSlowBody: a body that arrives too slowly is answered 408.
func TestMiddlewareSlowBody(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: 200 * time.Millisecond}, Streaming: streaming})
		pr, pw := io.Pipe()
		var sentAll atomic.Bool // the client sent its whole body: the answer came too late to prove the timeout
		go func() {
			for range 1000 { // 20 s at the least; the answer ends it
				if _, err := pw.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			sentAll.Store(true)
			pw.Close()
		}()
		req, _ := http.NewRequest("POST", s.URL, pr)
		resp, err := http.DefaultClient.Do(req)
		answeredEarly := !sentAll.Load()
		pr.CloseWithError(errors.New("done"))
		if err != nil {
			t.Fatalf("streaming %v: %v", streaming, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 408 || problem(t, string(answer)).Stage != "timeout" {
			t.Errorf("slow body (streaming %v), timeout 200 ms: %d %s, want 408 stage timeout", streaming, resp.StatusCode, answer)
		}
		if !answeredEarly {
			t.Errorf("slow body (streaming %v): answered only after the whole body arrived", streaming)
		}
	}
}

// TestMiddlewareStalledBody: a client that sends part of a body and then
// nothing is answered 408; only the read deadline can end that read.
func TestMiddlewareStalledBody(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: 300 * time.Millisecond}, Streaming: streaming})
		resp, answer, el, _ := stalledPost(t, fmt.Sprintf("stalled body (streaming %v)", streaming), s, "/", 100)
		if resp.StatusCode != 408 || problem(t, string(answer)).Stage != "timeout" {
			t.Errorf("stalled body (streaming %v): %d %s, want 408 stage timeout", streaming, resp.StatusCode, answer)
		}
		if el > 3*time.Second {
			t.Errorf("stalled body (streaming %v): answered after %v", streaming, el)
		}
	}
}

// TestStalledBodyAnsweredInAndAfterSynctestBubble (trap: the process's one
// watchdog timer armed from a testing/synctest bubble): a whole body's
// Budget.Timeout, behind net/http's own writer, is kept by a process-wide
// watchdog with one timer. Armed from a bubble, a real timer is scheduled
// on the bubble's clock and never fires (a stalled client in the bubble
// waits forever), and its target, taken from the bubble's clock, keeps
// every later body outside from re-arming it: a stalled client of a real
// server is then never answered. A stalled client is answered 408 after
// Budget.Timeout inside the bubble (synthetic time: exactly) and outside
// it afterwards.
func TestStalledBodyAnsweredInAndAfterSynctestBubble(t *testing.T) {
	cfg := boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: 300 * time.Millisecond}}
	s := echoServer(t, cfg)
	// A body outside first: the watchdog's timer exists, on the real clock.
	if code, answer := post(t, s.URL, "", []byte("hello"), false); code != 200 {
		t.Fatalf("a body before the bubble: %d %s", code, answer)
	}
	synctest.Test(t, func(t *testing.T) {
		mw, err := boundhttp.NewMiddleware(cfg)
		if err != nil {
			t.Fatal(err)
		}
		l := testenc.NewPipeListener()
		srv := &http.Server{Handler: mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if b, err := io.ReadAll(r.Body); err == nil {
				w.Write(b)
			}
		}))}
		go srv.Serve(l)
		defer srv.Shutdown(context.Background()) // waits for the connection's lingering close
		c, err := l.Dial(context.Background(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		go io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nfirst bytes")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("stalled body in a bubble: no answer after %v: %v", time.Since(start), err)
		}
		if el := time.Since(start); resp.StatusCode != 408 || el != cfg.Budget.Timeout {
			t.Errorf("stalled body in a bubble: %d after %v, want 408 after %v", resp.StatusCode, el, cfg.Budget.Timeout)
		}
	})
	resp, answer, el, _ := stalledPost(t, "stalled body after a bubble", s, "/", 100)
	if resp.StatusCode != 408 || el > 3*time.Second {
		t.Errorf("stalled body after a bubble: %d %s after %v, want 408 within 3 s", resp.StatusCode, answer, el)
	}
}

// TestReadDeadlineOutlivesBody: Budget.Timeout ends reads of the body by
// the connection's read deadline (in streaming mode set up front; for a
// body read whole set by the watchdog only when the read outlasts it).
// Once the body is done with, the deadline must not fire later: net/http's
// background read, started when the wire body ended, would fail with it
// and cancel the request's context in the middle of a response. In
// streaming mode the handler decodes its JSON and stops reading before
// io.EOF (json.Decoder does); a whole body ended before the handler ran.
func TestReadDeadlineOutlivesBody(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			t.Parallel()
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: timeout}, Streaming: streaming})
			if err != nil {
				t.Fatal(err)
			}
			s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var v map[string]any
				if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				select {
				case <-r.Context().Done():
				case <-time.After(4 * timeout):
				}
				fmt.Fprintf(w, "context: %v", r.Context().Err())
			})))
			t.Cleanup(s.Close)
			data := encode("gzip", []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`))
			req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(data))
			req.Header.Set("Content-Encoding", "gzip")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(answer) != "context: <nil>" {
				t.Errorf("handler done reading, working past Timeout: %d %q, want 200 %q", resp.StatusCode, answer, "context: <nil>")
			}
		})
	}
}

// TestStreamingTimeoutStartsAtFirstRead: Budget.Timeout runs from the
// moment the body starts being read. In streaming mode that is the
// handler's first Read, not the handler's start: a handler that does its
// own work first (a session lookup, say) must not see a body its client
// sent at once refused as too slow.
//
// Event-driven: the handler reads only once the client has handed over the
// whole body (small enough to sit in the socket buffers) and the timeout
// has passed since the handler started; the read then takes a few
// syscalls, far inside the timeout even at load 15 on two cores. Sabotage:
// not re-arming the read deadline at the first Read answered 408.
func TestStreamingTimeoutStartsAtFirstRead(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{Timeout: timeout}})
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan struct{})
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		<-sent
		time.Sleep(timeout - time.Since(start) + 100*time.Millisecond) // the handler's own work outlasts the timeout
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return // the middleware answers
		}
		fmt.Fprintf(w, "%d bytes", len(data))
	})))
	t.Cleanup(s.Close)
	const size = 16 << 10
	req, _ := http.NewRequest("POST", s.URL, &eofSignal{Reader: bytes.NewReader(text(size)), eof: sent})
	req.ContentLength = size
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("%d bytes", size); resp.StatusCode != 200 || string(answer) != want {
		t.Errorf("body sent at once, read after the handler's own work: %d %.200s, want 200 %q", resp.StatusCode, answer, want)
	}
}

// eofSignal is a request body that closes eof once the client has read all
// of it (it is then on the wire).
type eofSignal struct {
	io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.Reader.Read(p)
	if err == io.EOF {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}

// TestReadBodyClientTimeout: with Client.Timeout, http.Client wraps the
// body; ReadBody falls back to io.ReadAll and still gets the whole body.
func TestReadBodyClientTimeout(t *testing.T) {
	t.Parallel()
	data := text(100 << 10)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: time.Hour}).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, err := boundhttp.ReadBody(resp.Body); err != nil || !bytes.Equal(got, data) {
		t.Errorf("ReadBody of a wrapped body = %d bytes, %v; want %d", len(got), err, len(data))
	}
}

// deadlineBound is how long after its deadline a fetch may still run: the
// Transport's promise is 2 × 500 ms plus scheduling; the rest is margin for
// a loaded machine. Without the Transport's connection-level abort these
// fetches never return.
const deadlineBound = 6 * time.Second

// wedge makes the writes of a client's first connection block, as a peer
// that stopped reading makes them block once the socket buffers are full,
// at the moment the test chooses (arm): exactly, where filling real buffers
// takes as long as the machine's load makes it, and a test that waits for
// it races its own deadline. wedged is closed when the first write blocks;
// a blocked write returns only when the connection is closed (the
// Transport's lever) or the test ends, never by a deadline.
type wedge struct {
	wedged chan struct{}
	done   <-chan struct{}
	once   sync.Once
	armed  atomic.Bool
	first  atomic.Pointer[wedgeConn]
}

func newWedge(done <-chan struct{}) *wedge { return &wedge{wedged: make(chan struct{}), done: done} }

// set marks the trap set.
func (w *wedge) set() { w.once.Do(func() { close(w.wedged) }) }

// dial dials; the first connection is the one arm wedges.
func (w *wedge) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := new(net.Dialer).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	wc := &wedgeConn{Conn: c, w: w, closed: make(chan struct{})}
	w.first.CompareAndSwap(nil, wc)
	return wc, nil
}

type wedgeConn struct {
	net.Conn
	w         *wedge
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *wedgeConn) Write(p []byte) (int, error) {
	if c.w.armed.Load() && c.w.first.Load() == c {
		c.w.set()
		select {
		case <-c.closed:
		case <-c.w.done:
		}
		return 0, net.ErrClosed
	}
	return c.Conn.Write(p)
}

func (c *wedgeConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// stuckWriter is an HTTP/2 server that answers the first request with
// HEADERS and 16 KiB of DATA and a PING; once the client acknowledged that
// PING (so it has taken in the headers and the data before it), it arms w
// and sends another: net/http's client answers a PING under the
// connection's write lock (as it writes WINDOW_UPDATE and RST_STREAM), so
// it blocks there, holding the lock, as against a peer that stopped
// reading. The connection stays open until the test ends.
func stuckWriter(w *wedge, done <-chan struct{}) func(c *testenc.H2Conn) {
	return func(c *testenc.H2Conn) {
		id, err := c.NextRequest()
		if err != nil {
			return
		}
		c.Headers(id, false, ":status", "200", "content-type", "text/plain", "content-length", "1048576")
		c.Data(id, make([]byte, 16<<10), 0, false)
		ready := []byte("ready...")
		c.WriteFrame(testenc.H2Ping, 0, 0, ready)
		for range 1000 { // the client writes a few frames before the ack
			f, err := c.ReadFrame()
			if err != nil {
				return
			}
			if f.Type == testenc.H2Ping && f.Flags&testenc.H2FlagAck != 0 && bytes.Equal(f.Payload, ready) {
				w.armed.Store(true)
				c.WriteFrame(testenc.H2Ping, 0, 0, []byte("wedge..."))
				break
			}
		}
		<-done // hold the connection open, unread
	}
}

// pingFlooder is an HTTP/2 server (a real wedge of the socket buffers) that answers the first request with
// HEADERS and 16 KiB of DATA, then never reads its socket again and writes
// PING frames until its writes block: net/http's client answers each PING
// under the connection's write lock, so once the socket buffers fill it
// blocks there, holding the lock. wedged is closed then; the connection
// stays open until the test ends.
func pingFlooder(wedged chan struct{}, done <-chan struct{}) func(c *testenc.H2Conn) {
	var once sync.Once
	return func(c *testenc.H2Conn) {
		raw := c.Conn
		if tc, ok := raw.(*tls.Conn); ok {
			raw = tc.NetConn()
		}
		if tc, ok := raw.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10) // fill sooner
		}
		id, err := c.NextRequest()
		if err != nil {
			return
		}
		c.Headers(id, false, ":status", "200", "content-type", "text/plain", "content-length", "1048576")
		c.Data(id, make([]byte, 16<<10), 0, false)
		pings := make([]byte, 0, 1000*17)
		for i := range 1000 {
			pings = append(pings, 0, 0, 8, testenc.H2Ping, 0, 0, 0, 0, 0, byte(i), 0, 0, 0, 0, 0, 0, 0)
		}
		var written atomic.Int64
		go func() {
			for range 100000 { // at most 100M PINGs; the client wedges after a few thousand
				if _, err := c.Conn.Write(pings); err != nil {
					return
				}
				written.Add(1)
			}
		}()
		for last := int64(-1); ; { // wedged: no write completes for 200 ms
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if n := written.Load(); n == last {
				break
			} else {
				last = n
			}
		}
		once.Do(func() { close(wedged) })
		<-done // hold the connection open, unread
	}
}

// smallSendBuffer dials with a 4 KiB send buffer, so that a peer that
// stops reading blocks the client's writes within milliseconds.
func smallSendBuffer(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := new(net.Dialer).DialContext(ctx, network, addr)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// hostile1 is the HTTP/1.1 counterpart: headers and 16 KiB of a 1 MiB
// body, then nothing, the request never read further.
func hostile1(t *testing.T, done <-chan struct{}) string {
	return testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1048576\r\n\r\n")
		conn.Write(make([]byte, 16<<10))
		<-done
	})
}

// TestDeadlineEndsFetchFromStuckPeer pins the trap of a peer that stops
// reading: every deadline (Budget.Timeout, the request's context,
// http.Client.Timeout) ends RoundTrip, Read and Close within deadlineBound,
// on HTTP/1.1, h2c and HTTP/2 over TLS, in whole-body, streaming and Close
// paths, and the in-flight charge is given back.
func TestDeadlineEndsFetchFromStuckPeer(t *testing.T) {
	t.Parallel()
	const deadline = 2500 * time.Millisecond
	type result struct {
		name string
		took time.Duration
		err  error
		hung bool
		held int64
		set  bool
	}
	var wg sync.WaitGroup
	results := make(chan result, 27)
	for _, proto := range []string{"http1", "h2c", "h2"} {
		for _, path := range []string{"whole", "stream", "close"} {
			for _, clock := range []string{"budget", "context", "client"} {
				wg.Add(1)
				go func() { // all at once: each waits for its deadline
					defer wg.Done()
					took, err, held, hung, set := fetchFromStuckPeer(t, proto, path, clock, deadline)
					results <- result{proto + "/" + path + "/" + clock, took - deadline, err, hung, held, set}
				}()
			}
		}
	}
	wg.Wait()
	close(results)
	for r := range results {
		switch {
		case !r.set:
			t.Errorf("%s: the client's writes never blocked: the trap was not set", r.name)
		case r.hung:
			t.Errorf("%s: still running %v after the deadline", r.name, r.took)
		case r.err == nil:
			t.Errorf("%s: no error from a stuck peer", r.name)
		case r.held != 0:
			t.Errorf("%s: in-flight charge after the fetch ended: %d bytes, want 0", r.name, r.held)
		default:
			t.Logf("%s: ended %v after the deadline: %.120v", r.name, r.took.Round(time.Millisecond), r.err)
		}
	}
}

// fetchFromStuckPeer fetches from a stuck peer of proto along path with
// the deadline set on clock, and reports how long it took, its error, the
// in-flight bytes still held, whether it hung past deadlineBound, and
// whether the trap was set (on HTTP/2, the client's writes blocked) by the
// time the fetch ended: an event, not a race with the deadline.
func fetchFromStuckPeer(t *testing.T, proto, path, clock string, deadline time.Duration) (took time.Duration, err error, held int64, hung, set bool) {
	done := make(chan struct{})
	defer close(done)
	w := newWedge(done)
	wedged := w.wedged
	var url string
	var base *http.Transport
	switch proto {
	case "http1":
		url, base = hostile1(t, done), boundhttp.NewBaseTransport()
		w.set() // the peer never reads: the client writes nothing after its request
	default:
		u, pool := testenc.H2Server(t, proto == "h2", stuckWriter(w, done))
		url, base = u, testenc.H2Client(boundhttp.NewBaseTransport(), pool)
		base.HTTP2.WriteByteTimeout = time.Hour // prove the Transport's own lever
		base.DialContext = w.dial
	}
	f := limits.NewInFlight(8 << 20)
	tr := &boundhttp.Transport{Base: base, InFlight: f, Streaming: path != "whole"}
	client := &http.Client{Transport: tr}
	ctx := context.Background()
	switch clock {
	case "budget":
		tr.Budget.Timeout = deadline
	case "context":
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, deadline)
		defer cancel()
	case "client":
		client.Timeout = deadline
	}
	start := time.Now()
	ended := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := client.Do(req)
		if err != nil {
			ended <- err
			return
		}
		if path == "close" { // Close, unread, once the peer is stuck and the deadline passed
			select {
			case <-wedged:
			case <-done:
			}
			<-time.After(deadline - time.Since(start))
			ended <- errors.Join(errors.New("closed"), resp.Body.Close())
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ended <- err
	}()
	isSet := func() bool {
		select {
		case <-wedged:
			return true
		default:
			return false
		}
	}
	select {
	case err := <-ended:
		return time.Since(start), err, f.InUse(), false, isSet()
	case <-time.After(deadline + deadlineBound):
		return time.Since(start), nil, f.InUse(), true, isSet()
	}
}

// silentPeers are servers that keep a fetch before its response headers:
// no answer at all, headers a byte at a time, 103 Early Hints every 10 ms.
func silentPeers(t *testing.T, done <-chan struct{}) map[string]string {
	wait := func(d time.Duration) bool {
		select {
		case <-done:
			return false
		case <-time.After(d):
			return true
		}
	}
	return map[string]string{
		"silent": testenc.RawServer(t, func(conn net.Conn, r *http.Request) { <-done }),
		"byte-a-time": testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
			for i := range 100000 {
				if !wait(10*time.Millisecond) || conn.SetWriteDeadline(time.Now().Add(time.Second)) != nil {
					return
				}
				const head = "HTTP/1.1 200 OK\r\nX-Slow: a"
				if _, err := fmt.Fprintf(conn, "%c", head[min(i, len(head)-1)]); err != nil {
					return
				}
			}
		}),
		"early-hints": testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
			for range 100000 {
				if !wait(10 * time.Millisecond) {
					return
				}
				if _, err := io.WriteString(conn, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"); err != nil {
					return
				}
			}
		}),
	}
}

// TestHeaderTimeoutEndsSilentPeer pins the trap of time before the headers
// being bounded by nothing the library sets: the Transport's HeaderTimeout
// (and its default, shortened here) ends a fetch from a server that never
// answers, answers a byte at a time or sends 1xx forever; the error is a
// timeout as net/http callers test for it.
func TestHeaderTimeoutEndsSilentPeer(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	const limit = 300 * time.Millisecond
	for name, url := range silentPeers(t, done) {
		for _, explicit := range []bool{true, false} {
			tr := &boundhttp.Transport{}
			if explicit {
				tr.HeaderTimeout = limit
			} else {
				defer boundhttp.SetDefaultTimeouts(limit, boundhttp.DefaultBodyTimeout)()
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit+20*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			start := time.Now()
			_, err := (&http.Client{Transport: tr}).Do(req)
			took := time.Since(start)
			cancel()
			var ne net.Error
			if !errors.Is(err, boundhttp.ErrHeaderTimeout) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("%s (explicit %v): %v, want ErrHeaderTimeout reporting Timeout", name, explicit, err)
			}
			if took > limit+5*time.Second {
				t.Errorf("%s (explicit %v): took %v, want about %v", name, explicit, took, limit)
			}
			t.Logf("%s (explicit %v): ended after %v: %v", name, explicit, took.Round(time.Millisecond), err)
		}
	}
	if _, err := (&boundhttp.Transport{HeaderTimeout: -1}).RoundTrip(httptestRequest(t)); err == nil || !strings.Contains(err.Error(), "HeaderTimeout") {
		t.Errorf("negative HeaderTimeout: %v, want an error naming it", err)
	}
}

func httptestRequest(t *testing.T) *http.Request {
	req, err := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestDefaultBodyTimeoutWholeBodyOnly pins the default body time: with
// Budget.Timeout zero a whole-body fetch of a stalled body ends at
// DefaultBodyTimeout (shortened here) with a timeout rejection, and a
// streaming one is left to its caller's context.
func TestDefaultBodyTimeoutWholeBodyOnly(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	defer boundhttp.SetDefaultTimeouts(boundhttp.DefaultHeaderTimeout, 300*time.Millisecond)()
	url := hostile1(t, done)
	_, err := (&http.Client{Transport: &boundhttp.Transport{}}).Get(url)
	var le *limits.Error
	if !errors.As(err, &le) || le.Stage != limits.StageTimeout || le.Limit != 300 {
		t.Errorf("whole-body, Timeout zero: %v, want a timeout rejection at the default (300 ms here)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := (&http.Client{Transport: &boundhttp.Transport{Streaming: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limits.ErrTimeout) {
		t.Errorf("streaming, Timeout zero: %v, want the caller's deadline, not a default", err)
	}
}

// TestMiddlewareDefaultBodyTimeout pins the trap of a server without a
// body time by default: under a zero Budget.Timeout a client that sends
// part of a brotli body and stalls held its decoder's in-flight share for
// as long as it liked. A whole body is answered 408 at DefaultBodyTimeout
// (shortened here) and its share returns; a streaming body is left to its
// handler, as in the Transport.
func TestMiddlewareDefaultBodyTimeout(t *testing.T) {
	defer boundhttp.SetDefaultTimeouts(boundhttp.DefaultHeaderTimeout, 300*time.Millisecond)()
	wire := encode("br", text(1<<20))
	for _, streaming := range []bool{false, true} {
		f := limits.NewInFlight(64 << 20)
		s := echoServer(t, boundhttp.MiddlewareConfig{InFlight: f, Streaming: streaming})
		conn, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() }) // before the server's Close
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: br\r\nContent-Length: %d\r\n\r\n", len(wire))
		conn.Write(wire[:len(wire)/2])
		if streaming {
			// No answer is the behaviour: well past the default (300 ms),
			// the stalled streaming body is still the handler's.
			conn.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
			if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
				t.Errorf("stalled streaming body, Timeout zero: answered %d, want no default timeout", resp.StatusCode)
			}
			conn.Close()
			continue
		}
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("stalled whole body, Timeout zero: %v, want 408 at the default body timeout", err)
		}
		answer, _ := io.ReadAll(resp.Body)
		conn.Close()
		if p := problem(t, string(answer)); resp.StatusCode != 408 || p.Stage != "timeout" || p.Limit != 300 {
			t.Errorf("stalled whole body, Timeout zero: %d %s, want 408 stage timeout, limit 300 (ms)", resp.StatusCode, answer)
		}
		if f.Peak() == 0 {
			t.Errorf("stalled whole body: InFlight never charged, the trap is not reached")
		}
		if n := f.InUse(); n != 0 {
			t.Errorf("stalled whole body: InFlight InUse() = %d after the 408, want 0", n)
		}
	}
}

// TestBodyTimeoutIsNetTimeout pins the trap of a Budget timeout that
// net/http-style code cannot see: through http.Client it is a *url.Error
// around a *ResponseError around the *limits.Error, and
// errors.As(err, &netErr) && netErr.Timeout() must hold.
func TestBodyTimeoutIsNetTimeout(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	defer close(done)
	url := hostile1(t, done)
	_, err := (&http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{Timeout: 200 * time.Millisecond}}}).Get(url)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("body timeout through http.Client: %v (%T), want a net.Error whose Timeout is true", err, err)
	}
	var re *boundhttp.ResponseError
	if !errors.As(err, &re) || !re.Timeout() {
		t.Errorf("ResponseError.Timeout of a body timeout: false, want true (%v)", err)
	}
	if (&boundhttp.ResponseError{Err: &limits.Error{Stage: limits.StageDecoded}}).Timeout() {
		t.Errorf("ResponseError.Timeout of a size rejection: true, want false")
	}
}

// TestRaisedHeaderTimeoutNotCutByBase pins the trap of a second, hidden
// header clock: HeaderTimeout is documented as the time to the response
// headers, to be raised for slow servers, but a base transport with its own
// ResponseHeaderTimeout (NewBaseTransport's was the 30 s default) cut a
// response that came after it and before HeaderTimeout, with net/http's
// error instead of ErrHeaderTimeout. The default is shortened here; a
// server that answers after it, well within the raised HeaderTimeout, must
// be answered, over HTTP/1.1 with a nil Base and over HTTP/2 with
// NewBaseTransport as Base.
func TestRaisedHeaderTimeoutNotCutByBase(t *testing.T) {
	const short, raised = 200 * time.Millisecond, 20 * time.Second
	defer boundhttp.SetDefaultTimeouts(short, boundhttp.DefaultBodyTimeout)()
	late := func() <-chan time.Time { return time.After(3 * short) } // the server is slow, by design
	h1 := testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
		<-late()
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	})
	h2, pool := testenc.H2Server(t, true, func(c *testenc.H2Conn) {
		id, err := c.NextRequest()
		if err != nil {
			return
		}
		<-late()
		c.Headers(id, false, ":status", "200", "content-length", "2")
		c.Data(id, []byte("ok"), 0, true)
		io.Copy(io.Discard, c) // until the client closes
	})
	for name, tr := range map[string]*boundhttp.Transport{
		"http1/nil Base":              {HeaderTimeout: raised},
		"h2/NewBaseTransport as Base": {HeaderTimeout: raised, Base: testenc.H2Client(boundhttp.NewBaseTransport(), pool)},
	} {
		url := h1
		if tr.Base != nil {
			url = h2
		}
		ctx, cancel := context.WithTimeout(context.Background(), raised)
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Errorf("%s: %v, want the response that came within HeaderTimeout (%v)", name, err, raised)
		} else {
			resp.Body.Close()
		}
		cancel()
		tr.CloseIdleConnections()
	}
}

// TestWedgedConnectionNotHandedOn pins the trap of a deadline that ends
// one fetch but leaves its wedged HTTP/2 connection in the pool: a server
// that stops reading while it floods PINGs leaves net/http's client blocked
// under the connection's write lock, and a whole body, read to its end of
// buffered bytes, closes without touching that lock, so nothing closed the
// connection and the next request on it waited its whole HeaderTimeout
// (then the next one, until a PING timeout). Once net/http leaves a Read
// waiting abortGrace past the deadline, the connection is stuck and must
// go: the next request gets a new one and is answered at once, also when
// the pool hands it the closed connection before net/http noticed the
// close (see TestRequestHandedClosedWedgedConnSentAgain, which holds that
// window open; here it opens under load). The base's WriteByteTimeout is
// an hour here, to prove the Transport's own lever.
func TestWedgedConnectionNotHandedOn(t *testing.T) {
	t.Parallel()
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "h2c", true: "h2"}[useTLS], func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			defer close(done)
			wedged := make(chan struct{})
			stuck := pingFlooder(wedged, done)
			var conns atomic.Int32
			url, pool := testenc.H2Server(t, useTLS, func(c *testenc.H2Conn) {
				if conns.Add(1) == 1 {
					stuck(c)
					return
				}
				for { // later connections answer
					id, err := c.NextRequest()
					if err != nil {
						return
					}
					c.Headers(id, false, ":status", "200", "content-length", "2")
					c.Data(id, []byte("ok"), 0, true)
				}
			})
			base := testenc.H2Client(boundhttp.NewBaseTransport(), pool)
			base.HTTP2.WriteByteTimeout = time.Hour
			base.DialContext = smallSendBuffer
			const deadline = 2500 * time.Millisecond
			tr := &boundhttp.Transport{Base: base, Budget: limits.Budget{Timeout: deadline}, HeaderTimeout: deadlineBound}
			first := make(chan error, 1)
			go func() {
				_, err := tr.RoundTrip(newGet(t, url))
				first <- err
			}()
			select {
			case <-wedged:
			case <-time.After(deadline):
				t.Fatalf("the peer's writes never blocked before the deadline: the trap was not set")
			}
			if err := <-first; err == nil {
				t.Fatalf("first fetch from the stuck peer: no error")
			}
			start := time.Now()
			resp, err := tr.RoundTrip(newGet(t, url))
			took := time.Since(start)
			if err != nil {
				t.Fatalf("next fetch: %v after %v, want an answer on a new connection", err, took)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "ok" || err != nil || took > deadlineBound {
				t.Errorf("next fetch: %q, %v after %v, want ok at once", body, err, took)
			}
			if n := conns.Load(); n != 2 {
				t.Errorf("connections: %d, want 2 (the wedged one closed, a new one)", n)
			}
		})
	}
}

// stalePool is a base transport that holds open net/http's HTTP/2 pool
// window around a connection closed under it. Its first request gets a
// connection whose body reads the connection itself and ignores the
// request's context (a wedged stream). Once that connection is closed, the
// pool hands it to one more request, as net/http's does until the
// connection's read loop has noticed the close, and that request fails as
// net/http fails it (a write on a closed connection); then the pool drops
// it. Later requests get new connections and are answered "ok"; the
// request bodies they carried are recorded.
type stalePool struct {
	mu     sync.Mutex
	conn   *poolConn
	dials  int
	bodies []string
}

type poolConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *poolConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (p *stalePool) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	c, reused, stale := p.conn, p.conn != nil, false
	if c == nil {
		conn, _ := net.Pipe() // nothing is written: a Read waits until conn is closed
		c = &poolConn{Conn: conn, closed: make(chan struct{})}
		p.conn = c
		p.dials++
	} else {
		select {
		case <-c.closed:
			stale, p.conn = true, nil // noticed, after handing it out once more
		default:
		}
	}
	first := p.dials == 1 && !reused
	p.mu.Unlock()
	if trace := httptrace.ContextClientTrace(r.Context()); trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c, Reused: reused})
	}
	if stale {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
	}
	if first {
		return &http.Response{StatusCode: http.StatusOK, ContentLength: -1, Header: http.Header{"Content-Type": {"text/plain"}},
			Body: io.NopCloser(c), Request: r}, nil
	}
	var got []byte
	if r.Body != nil {
		got, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	p.mu.Lock()
	p.bodies = append(p.bodies, string(got))
	p.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, ContentLength: 2, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
}

// TestRequestHandedClosedWedgedConnSentAgain pins the trap of the pool's
// window after a wedged connection is closed: net/http's HTTP/2 pool keeps
// handing the connection out until its read loop has noticed the close (it
// sets the connection closed only then), so the next request of the user,
// taken from the pool microseconds after the close, was written to a
// closed socket and failed with "use of closed network connection", an
// error net/http does not retry (seen about 260 µs after the close under
// load). None of such a request reached the peer, so the Transport sends it
// again on another connection whatever its method, once its body can be
// rewound; one that cannot be gets the connection's error. The window is
// held open here by the base, so each run hits it.
func TestRequestHandedClosedWedgedConnSentAgain(t *testing.T) {
	t.Parallel()
	type oneShot struct{ io.Reader } // a body without GetBody
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want string // the body the peer got; "" with sent false: not sent again
		sent bool
	}{
		{"GET", func() *http.Request { r, _ := http.NewRequest("GET", "http://stale.invalid/", nil); return r }, "", true},
		{"POST rewindable", func() *http.Request {
			r, _ := http.NewRequest("POST", "http://stale.invalid/", strings.NewReader("payload"))
			return r
		}, "payload", true},
		{"POST one-shot", func() *http.Request {
			r, _ := http.NewRequest("POST", "http://stale.invalid/", io.NopCloser(oneShot{strings.NewReader("payload")}))
			return r
		}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool := new(stalePool)
			tr := &boundhttp.Transport{Base: pool, Budget: limits.Budget{Timeout: 50 * time.Millisecond}}
			if _, err := tr.RoundTrip(newGet(t, "http://stale.invalid/")); err == nil {
				t.Fatalf("first fetch from the wedged connection: no error")
			}
			pool.mu.Lock()
			c := pool.conn
			pool.mu.Unlock()
			select {
			case <-c.closed:
			default:
				t.Fatalf("the first fetch ended with its wedged connection open")
			}
			resp, err := tr.RoundTrip(tc.req())
			if !tc.sent {
				if !errors.Is(err, net.ErrClosed) {
					t.Fatalf("next fetch, body not rewindable: %v, want the closed connection's error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("next fetch, handed the closed connection: %v, want it sent again on a new one", err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			pool.mu.Lock()
			defer pool.mu.Unlock()
			if string(body) != "ok" || err != nil || pool.dials != 2 || len(pool.bodies) != 1 || pool.bodies[0] != tc.want {
				t.Errorf("next fetch: %q, %v, dials %d, bodies the peer got %q; want ok, 2 dials, [%q]",
					body, err, pool.dials, pool.bodies, tc.want)
			}
		})
	}
}

// lateSource is a body whose first Read waits until ctx is done (the
// client's body timer fired and cancelled the request), then returns its
// bytes and, after them, io.EOF: bytes that arrive just as the timer fires.
type lateSource struct {
	ctx  context.Context
	data []byte
}

func (s *lateSource) Read(p []byte) (int, error) {
	<-s.ctx.Done()
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

func (s *lateSource) Close() error { return nil }

// TestTimerLabelsOnlyWhatItCut pins the trap of a body timer that claims
// every failure after it fired: once Budget.Timeout's timer had cancelled
// the request, any error of the body came back as stage timeout, so a body
// that could never fit in InFlight (a verdict on its size, stage inflight)
// read as a timeout, and the decoder's own timeout was wrapped in a second
// one ("timeout: ...: timeout: ..."). The stage is the true cause: a
// verdict on the bytes keeps its stage, a timeout appears once, and a wait
// for room that the timer cut is stage inflight, a timeout by its cause
// (as one cut by the request's deadline is).
func TestTimerLabelsOnlyWhatItCut(t *testing.T) {
	t.Parallel()
	// base answers every request with src(ctx), ctx being the request's.
	base := func(status int, src func(context.Context) io.ReadCloser) http.RoundTripper {
		return rtFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{"Location": {"/next"}}, ContentLength: -1,
				Body: src(r.Context()), Request: r}, nil
		})
	}
	once := func(err error) {
		t.Helper()
		if n := strings.Count(err.Error(), "timeout"); n > 1 {
			t.Errorf("%q names the timeout %d times, want once", err, n)
		}
	}

	t.Run("never fits after the timer fired", func(t *testing.T) {
		// A redirect's body is read on first Read: after the timer fired,
		// with the decoder's own clock just started (and far from its end:
		// the Read that reaches the verdict takes microseconds).
		tr := &boundhttp.Transport{Budget: limits.Budget{Timeout: 200 * time.Millisecond}, InFlight: limits.NewInFlight(100),
			Base: base(http.StatusFound, func(ctx context.Context) io.ReadCloser { return &lateSource{ctx, make([]byte, 1000)} })}
		resp, err := tr.RoundTrip(newGet(t, "http://example.invalid/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		<-resp.Request.Context().Done() // the timer fired
		_, err = resp.Body.Read(make([]byte, 10))
		var le *limits.Error
		if !errors.As(err, &le) || le.Stage != limits.StageInFlight || le.Observed <= le.Limit ||
			errors.Is(err, limits.ErrTimeout) {
			t.Fatalf("a body that never fits, read after the timer fired: %v, want stage inflight, never fits, no timeout", err)
		}
		once(err)
	})

	t.Run("decoder's own timeout after the timer fired", func(t *testing.T) {
		const timeout = 20 * time.Millisecond
		var reqCtx context.Context
		tr := &boundhttp.Transport{Budget: limits.Budget{Timeout: timeout}, Streaming: true,
			Base: base(http.StatusOK, func(ctx context.Context) io.ReadCloser {
				reqCtx = ctx
				return io.NopCloser(strings.NewReader(strings.Repeat("x", 1000)))
			})}
		resp, err := tr.RoundTrip(newGet(t, "http://example.invalid/"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if _, err := resp.Body.Read(make([]byte, 10)); err != nil { // starts the decoder's clock
			t.Fatal(err)
		}
		read := time.Now()
		<-reqCtx.Done()                                  // the timer fired
		time.Sleep(timeout - time.Since(read) + timeout) // and the decoder's clock passed too
		_, err = resp.Body.Read(make([]byte, 10))
		var le *limits.Error
		if !errors.As(err, &le) || le.Stage != limits.StageTimeout || le.Err != nil {
			t.Fatalf("read after both clocks passed: %v, want one stage timeout without a cause", err)
		}
		once(err)
	})

	t.Run("wait for room cut by the timer", func(t *testing.T) {
		f := limits.NewInFlight(1 << 20)
		h := inflight.NewHold(inflight.Of(f))
		h.Grow(f.Cap())
		defer h.Release()
		tr := &boundhttp.Transport{Budget: limits.Budget{Timeout: 20 * time.Millisecond}, InFlight: f,
			Base: base(http.StatusOK, func(context.Context) io.ReadCloser { return io.NopCloser(strings.NewReader("x")) })}
		_, err := tr.RoundTrip(newGet(t, "http://example.invalid/"))
		var le *limits.Error
		if !errors.As(err, &le) || le.Stage != limits.StageInFlight || le.Observed > le.Limit ||
			!errors.Is(err, limits.ErrBusy) || !errors.Is(err, limits.ErrTimeout) || !le.Timeout() {
			t.Fatalf("a wait for room cut by the body timer: %v, want stage inflight, busy, a timeout by its cause", err)
		}
		once(err)
	})
}

// TestWholeBodyEndingAfterDeadlineIsRejected (trap: a deadline that only
// the connection enforces): a body read whole checks the time at its end,
// not at every Read, since the connection's read deadline ends any read of
// the client's bytes. A body whose bytes do not come off that connection
// (an outer handler replaced r.Body) can reach its end after Budget.Timeout
// without any read failing: it must still be answered 408, never handed on.
func TestWholeBodyEndingAfterDeadlineIsRejected(t *testing.T) {
	t.Parallel()
	const timeout = 50 * time.Millisecond
	var called atomic.Bool
	inner := mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: timeout}})(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called.Store(true) }))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &lateReader{after: 2 * timeout, data: []byte(`{"a":1}`)}
		inner.ServeHTTP(w, r)
	}))
	defer s.Close()
	resp, err := http.Post(s.URL, "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || problem(t, string(answer)).Stage != "timeout" {
		t.Errorf("a body that ended after the deadline: %d %s, want 408 stage timeout", resp.StatusCode, answer)
	}
	if called.Load() {
		t.Error("the handler was called with a body that ended after the deadline")
	}
}

// lateReader returns data and io.EOF in one Read, once after has passed
// since its first Read: a body that ends late without a read that fails.
type lateReader struct {
	after time.Duration
	data  []byte
	start time.Time
}

func (l *lateReader) Read(p []byte) (int, error) {
	if l.start.IsZero() {
		l.start = time.Now()
	}
	<-time.After(l.after - time.Since(l.start))
	n := copy(p, l.data)
	l.data = l.data[n:]
	if len(l.data) == 0 {
		return n, io.EOF
	}
	return n, nil
}

func (l *lateReader) Close() error { return nil }

// TestStalledBodyBehindFailingReadDeadlineAnswered (trap: a read deadline
// taken on trust): a wrapper without Unwrap that forwards SetReadDeadline
// (through its own ResponseController) to a writer that has none, here
// http.TimeoutHandler's, fails when called. A whole body whose deadline
// was left to a call at the deadline would then stall unanswered until the
// server's ReadTimeout; it must get its 408 at about Budget.Timeout, as
// behind a writer with no SetReadDeadline at all.
func TestStalledBodyBehindFailingReadDeadlineAnswered(t *testing.T) {
	t.Parallel()
	const timeout = 100 * time.Millisecond
	mw := mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: timeout}})
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called for a stalled body")
	}))
	s := httptest.NewServer(http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(forwardingWriter{w}, r)
	}), time.Minute, "handler timeout"))
	defer s.Close()
	resp, answer, _, _ := stalledPost(t, "stalled body behind a failing SetReadDeadline", s, "/", 100)
	if resp.StatusCode != http.StatusRequestTimeout || problem(t, string(answer)).Stage != "timeout" {
		t.Errorf("stalled body behind a failing SetReadDeadline: %d %s, want 408 stage timeout", resp.StatusCode, answer)
	}
}

// forwardingWriter is a wrapper without Unwrap that forwards
// SetReadDeadline to the writer it wraps, which may have none.
type forwardingWriter struct{ http.ResponseWriter }

func (w forwardingWriter) SetReadDeadline(t time.Time) error {
	return http.NewResponseController(w.ResponseWriter).SetReadDeadline(t)
}

// TestTimeoutAnswerStatesElapsedOfShorterReadTimeout (trap: a rejection
// that reports a number nobody observed): a whole body's read is ended by
// whichever read deadline of the connection comes first, and the server's
// own ReadTimeout, shorter than Budget.Timeout, comes first. The 408 must
// say how long the body was read, not claim that the whole Budget.Timeout
// passed.
func TestTimeoutAnswerStatesElapsedOfShorterReadTimeout(t *testing.T) {
	t.Parallel()
	const budget = 10 * time.Second
	mw := mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: budget}})
	s := httptest.NewUnstartedServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called for a stalled body")
	})))
	s.Config.ReadTimeout = 200 * time.Millisecond
	s.Start()
	defer s.Close()
	resp, answer, elapsed, _ := stalledPost(t, "stalled body, ReadTimeout 200 ms, Budget.Timeout 10 s", s, "/", 100)
	p := problem(t, string(answer))
	if resp.StatusCode != http.StatusRequestTimeout || p.Stage != "timeout" || p.Limit != budget.Milliseconds() ||
		p.Observed > elapsed.Milliseconds() {
		t.Errorf("stalled body ended by a 200 ms ReadTimeout after %v: %d %s, want 408 stage timeout, limit %d, observed at most the time that passed",
			elapsed, resp.StatusCode, answer, budget.Milliseconds())
	}
}

// TestWholeBodyTimeoutExtremes (trap: deadline arithmetic that overflows):
// a whole body's deadline is its start plus Budget.Timeout, kept by the
// watchdog. The smallest Timeout, 1 ns, is over before any body arrives:
// 408. The largest, math.MaxInt64 (292 years), must not wrap into the
// past and cut a read that waits: a body whose bytes come after a pause
// (the watchdog would have fired by then) is accepted whole.
func TestWholeBodyTimeoutExtremes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		timeout time.Duration
		status  int
	}{{1, http.StatusRequestTimeout}, {math.MaxInt64 - 1, 200}, {math.MaxInt64, 200}} {
		mw := mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: tt.timeout}})
		s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			data, _ := io.ReadAll(r.Body)
			w.Write(data)
		})))
		defer s.Close()
		c, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nfirst")
		time.Sleep(50 * time.Millisecond) // the read waits: a deadline in the past would end it
		fmt.Fprintf(c, " rest")
		c.SetReadDeadline(time.Now().Add(8 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("Timeout %v: %v", tt.timeout, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.status || (tt.status == 200 && string(answer) != "first rest") {
			t.Errorf("Timeout %v, body paused 50 ms: %d %.200s, want %d", tt.timeout, resp.StatusCode, answer, tt.status)
		}
	}
}

// TestClientClockExtremes pins the boundary table of the client's two
// clocks, HeaderTimeout and Budget.Timeout, on loopback, whole-body and
// streaming: 1 ns ends the fetch with its own timeout (headers the server
// holds until the client gives up; a body that can only end after 1 ns),
// math.MaxInt64 lets it through (no overflowing deadline fires at once),
// and a negative one fails before anything is sent, whether the
// Transport's field or a request's WithBudget sets it. Nothing is held
// in flight afterwards.
func TestClientClockExtremes(t *testing.T) {
	var hits atomic.Int32
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/hold" { // no headers until the client gives up
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		io.WriteString(w, "hello, world")
	}))
	defer srv.Close()
	defer close(done)
	const huge = time.Duration(math.MaxInt64)
	for _, c := range []struct {
		name         string
		header, body time.Duration
		withBudget   bool // the budget comes with the request
		path, want   string
		sent         bool
	}{
		{"HeaderTimeout 1ns", time.Nanosecond, 0, false, "/hold", "header", true},
		{"Budget.Timeout 1ns", 0, time.Nanosecond, false, "/", "body", true},
		{"WithBudget Timeout 1ns", 0, time.Nanosecond, true, "/", "body", true},
		{"both MaxInt64", huge, huge, false, "/", "ok", true},
		{"WithBudget Timeout MaxInt64", huge, huge, true, "/", "ok", true},
		{"HeaderTimeout negative", -time.Nanosecond, 0, false, "/", "invalid", false},
		{"Budget.Timeout negative", 0, -time.Nanosecond, false, "/", "invalid", false},
		{"WithBudget Timeout negative", 0, -time.Nanosecond, true, "/", "invalid", false},
	} {
		for _, streaming := range []bool{false, true} {
			name := fmt.Sprintf("%s/streaming=%v", c.name, streaming)
			f := limits.NewInFlight(1 << 20)
			tr := &boundhttp.Transport{HeaderTimeout: c.header, Streaming: streaming, InFlight: f}
			ctx := context.Background()
			if c.withBudget {
				ctx = boundhttp.WithBudget(ctx, limits.Budget{Timeout: c.body})
			} else {
				tr.Budget.Timeout = c.body
			}
			before := hits.Load()
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+c.path, nil)
			resp, err := tr.RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			tr.CloseIdleConnections()
			var le *limits.Error
			switch c.want {
			case "header":
				if !errors.Is(err, boundhttp.ErrHeaderTimeout) {
					t.Errorf("%s: %v, want ErrHeaderTimeout", name, err)
				}
			case "body":
				if !errors.As(err, &le) || le.Stage != limits.StageTimeout {
					t.Errorf("%s: %v, want a rejection of stage timeout", name, err)
				}
			case "ok":
				if err != nil {
					t.Errorf("%s: %v, want the body", name, err)
				}
			case "invalid":
				if err == nil || !strings.Contains(err.Error(), "negative") {
					t.Errorf("%s: %v, want an error naming the negative clock", name, err)
				}
			}
			if !c.sent && hits.Load() != before {
				t.Errorf("%s: the request was sent", name)
			}
			if n := f.InUse(); n != 0 {
				t.Errorf("%s: %d bytes in flight after the fetch", name, n)
			}
		}
	}
}

// closedConnErr reports whether err is what HTTP/2 gives a request on a
// connection that was closed under it: the read loop's net.ErrClosed, or,
// when the stuck write's failure is seen first, the force close net/http
// then makes of the connection (which of the two comes first depends on the
// scheduling of net/http's goroutines).
func closedConnErr(err error) bool {
	return errors.Is(err, net.ErrClosed) ||
		(err != nil && strings.Contains(err.Error(), "client connection force closed"))
}

// TestRequestQueuedBehindWedgeSentAgain pins the trap of the requests
// that share a wedged HTTP/2 connection when it is first closed: net/http's
// pool hands the connection to every request while it is wedged (its write
// lock held by an answer to the peer that blocks), and each waits behind
// the lock to write its headers. When the guard of the stuck request
// closes the connection, each failed with "use of closed network
// connection", though none of it reached the peer: they got the
// connection before it was closed, so the resend of a request handed a
// closed connection did not apply. Such a request is sent again on a new
// connection when its body can be rewound; one that cannot be gets the
// connection's error; and one that wrote its headers before the wedge
// (the peer may have it) is not sent again either, also behind a Base that
// wraps net/http's and adds a trace of its own (which copies the request's
// trace hooks when the request passes it).
func TestRequestQueuedBehindWedgeSentAgain(t *testing.T) {
	t.Parallel()
	type oneShot struct{ io.Reader } // a body without GetBody
	get := func(url string) *http.Request { r, _ := http.NewRequest("GET", url, nil); return r }
	for _, tc := range []struct {
		name   string
		req    func(url string) *http.Request
		before bool // the request is written before the connection wedges
		wrap   bool // the Base wraps net/http's and traces the request itself
		sent   bool
	}{
		{"GET", get, false, false, true},
		{"POST one-shot", func(url string) *http.Request {
			r, _ := http.NewRequest("POST", url, io.NopCloser(oneShot{strings.NewReader("payload")}))
			return r
		}, false, false, false},
		{"GET written before the wedge", get, true, false, false},
		{"GET written before the wedge, traced by the Base", get, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			defer close(done)
			w := newWedge(done)
			var conns atomic.Int32
			written := make(chan struct{})
			url, _ := testenc.H2Server(t, false, func(c *testenc.H2Conn) {
				if conns.Add(1) != 1 {
					for { // later connections answer every request
						id, err := c.NextRequest()
						if err != nil {
							return
						}
						c.Headers(id, false, ":status", "200", "content-length", "2")
						c.Data(id, []byte("ok"), 0, true)
					}
				}
				id, err := c.NextRequest()
				if err != nil {
					return
				}
				c.Headers(id, false, ":status", "200", "content-type", "text/plain", "content-length", "1048576")
				c.Data(id, make([]byte, 16<<10), 0, false)
				if tc.before {
					if _, err := c.NextRequest(); err != nil { // the second request's headers came
						return
					}
					close(written)
				}
				// The PING whose answer blocks: see stuckWriter.
				ready := []byte("ready...")
				c.WriteFrame(testenc.H2Ping, 0, 0, ready)
				for range 1000 {
					f, err := c.ReadFrame()
					if err != nil {
						return
					}
					if f.Type == testenc.H2Ping && f.Flags&testenc.H2FlagAck != 0 && bytes.Equal(f.Payload, ready) {
						w.armed.Store(true)
						c.WriteFrame(testenc.H2Ping, 0, 0, []byte("wedge..."))
						break
					}
				}
				<-done // hold the connection open, unread
			})
			base := testenc.H2Client(boundhttp.NewBaseTransport(), nil)
			base.HTTP2.WriteByteTimeout = time.Hour // prove the Transport's own lever
			base.DialContext = w.dial
			tr := &boundhttp.Transport{Base: base, Streaming: true}
			if tc.wrap {
				tr.Base = rtFunc(func(r *http.Request) (*http.Response, error) {
					ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{WroteHeaders: func() {}})
					return base.RoundTrip(r.WithContext(ctx))
				})
			}
			ctx := boundhttp.WithBudget(context.Background(), limits.Budget{Timeout: 200 * time.Millisecond})
			first, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			stuckResp, err := tr.RoundTrip(first)
			if err != nil {
				t.Fatal(err)
			}
			go func() { io.Copy(io.Discard, stuckResp.Body); stuckResp.Body.Close() }()
			type result struct {
				resp *http.Response
				err  error
			}
			second := make(chan result, 1)
			send := func() {
				resp, err := tr.RoundTrip(tc.req(url))
				second <- result{resp, err}
			}
			if tc.before {
				go send()
				<-written
				<-w.wedged
			} else {
				<-w.wedged // the connection's write lock is stuck
				send()
			}
			r := <-second
			if !tc.sent {
				if !closedConnErr(r.err) || conns.Load() != 1 {
					t.Fatalf("%v on %d connections, want the closed connection's error, not sent again", r.err, conns.Load())
				}
				return
			}
			if r.err != nil {
				t.Fatalf("a request queued behind the wedge: %v, want it sent again on a new connection", r.err)
			}
			body, err := io.ReadAll(r.resp.Body)
			r.resp.Body.Close()
			if string(body) != "ok" || err != nil || conns.Load() != 2 {
				t.Errorf("a request queued behind the wedge: %q, %v, %d connections; want ok on a second", body, err, conns.Load())
			}
		})
	}
}
