package boundhttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// countingListener counts the bytes the server reads from its connections
// and records when the last connection closed.
type countingListener struct {
	net.Listener
	read   atomic.Int64
	closed chan time.Time
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

type countingConn struct {
	net.Conn
	l    *countingListener
	done atomic.Bool
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.l.read.Add(int64(n))
	return n, err
}

func (c *countingConn) Close() error {
	if !c.done.Swap(true) {
		c.l.closed <- time.Now()
	}
	return c.Conn.Close()
}

// TestRejectionDrainCostBoundedForGigabyteSender pins what the drain after
// a rejection costs: a client that declares and sends 1 GiB to a 512 KiB
// route, behind a recorder without Unwrap, is read for at most 64 MiB and
// held at most about 5 s, then disconnected; it never gets the server to
// read the whole gigabyte.
func TestRejectionDrainCostBoundedForGigabyteSender(t *testing.T) {
	t.Parallel()
	mw := boundhttp.Middleware(limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 512 << 10})
	s := httptest.NewUnstartedServer(recorded(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called for a rejected body")
	}))))
	cl := &countingListener{Listener: s.Listener, closed: make(chan time.Time, 1)}
	s.Listener = cl
	s.Start()
	defer s.Close()

	c, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const total = 1 << 30
	start := time.Now()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", total)
	go io.Copy(io.Discard, c)
	chunk := make([]byte, 64<<10)
	sent := 0
	for sent < total { // bounded: 16384 writes at most
		c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		n, err := c.Write(chunk)
		sent += n
		if err != nil {
			break
		}
	}
	var held time.Duration
	select {
	case at := <-cl.closed:
		held = at.Sub(start)
	case <-time.After(time.Minute):
		t.Fatal("the server never closed the connection")
	}
	read := cl.read.Load()
	t.Logf("1 GiB sender: server read %d MiB, held the connection %v, client sent %d MiB", read>>20, held.Round(time.Millisecond), sent>>20)
	if max := int64(64<<20 + 1<<20); read > max {
		t.Errorf("server read %d bytes of a rejected 1 GiB body, want at most %d (the drain bound and headers)", read, max)
	}
	if held > 20*time.Second {
		t.Errorf("server held the connection %v, want about the drain's 5 s at most", held)
	}
}

// TestRejectionDrainEndsSlowSender pins the drain's time bound: a client
// that trickles a rejected body forever, behind a recorder without Unwrap
// (no read deadline can be set), is disconnected about 5 s after the
// rejection, not held as long as it keeps sending.
func TestRejectionDrainEndsSlowSender(t *testing.T) {
	if testing.Short() {
		t.Skip("takes the drain's 5 s")
	}
	t.Parallel()
	mw := boundhttp.Middleware(limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 512 << 10})
	s := httptest.NewUnstartedServer(recorded(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))))
	cl := &countingListener{Listener: s.Listener, closed: make(chan time.Time, 1)}
	s.Listener = cl
	s.Start()
	defer s.Close()
	c, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 1<<30)
	go io.Copy(io.Discard, c)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range 3000 { // a minute at most
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := c.Write(make([]byte, 1024)); err != nil {
				return
			}
		}
	}()
	select {
	case at := <-cl.closed:
		held := at.Sub(start)
		t.Logf("trickling sender held %v, server read %d KiB", held.Round(time.Millisecond), cl.read.Load()>>10)
		if held > 20*time.Second {
			t.Errorf("trickling sender held the connection %v, want about the drain's 5 s", held)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the server still reads a trickling rejected body after 40 s")
	}
}

// TestStalledBodyBehindRecorderAnsweredAtTimeout pins the trap of a
// timeout that depends on what wraps the writer: behind a recorder without
// Unwrap no read deadline reaches the connection, and a client that sends
// part of a body and stalls held the exchange, unanswered, until it gave
// up. It must get its 408 at about Budget.Timeout, and the in-flight share
// must come back once the connection ends.
func TestStalledBodyBehindRecorderAnsweredAtTimeout(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(64 << 20)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: time.Second}, InFlight: f})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(recorded(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called for a stalled body")
	}))))
	defer s.Close()
	resp, _, el, _ := stalledPost(t, "stalled body behind a recorder, Budget.Timeout 1 s", s, "/", 100000)
	if resp.StatusCode != http.StatusRequestTimeout || el > 4*time.Second {
		t.Errorf("stalled body behind a recorder, Budget.Timeout 1 s: %d after %v, want 408 within about 2 s (the Timeout, then 1 s without a byte)", resp.StatusCode, el)
	}
	// stalledPost closed the connection: the client left, the blocked read returns and the share comes back
	for i := 0; f.InUse() != 0 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.InUse(); n != 0 {
		t.Errorf("InUse() = %d after the client left, want 0", n)
	}
}

// TestDrainLeavesHijackedConnAlone pins the trap of draining a connection
// the handler took: a streaming handler that hijacks a request whose body
// it did not read to its end, and hands the connection to a goroutine (a
// tunnel, an upgraded protocol that reads the body itself), owns every
// byte and every deadline of that connection. The drain after the handler
// must neither read from it nor set its read deadline, or the goroutine
// loses bytes and its reads time out.
func TestDrainLeavesHijackedConnAlone(t *testing.T) {
	t.Parallel()
	mw := mustMW(t, boundhttp.MiddlewareConfig{Streaming: true, InFlight: limits.NewInFlight(1 << 20)})
	got := make(chan string, 1)
	served := make(chan any, 1)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		go func() { // the connection is this goroutine's now
			defer conn.Close()
			body := make([]byte, 5)
			if _, err := io.ReadFull(brw, body); err != nil {
				got <- "body: " + err.Error()
				return
			}
			line, err := brw.ReadString('\n')
			if err != nil {
				got <- "line: " + err.Error()
				return
			}
			got <- string(body) + " " + line
		}()
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { served <- recover() }()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	if p := <-served; p != nil {
		t.Fatalf("the middleware panicked after the handler hijacked: %v", p)
	}
	// The middleware is done: the goroutine must still read what comes.
	fmt.Fprintf(c, "ping\n")
	select {
	case s := <-got:
		if s != "hello ping\n" {
			t.Fatalf("the hijacked connection's goroutine read %q, want %q", s, "hello ping\n")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hijacked connection's goroutine never finished")
	}
}

// TestExpectContinueBodyDrainedOnceAsked pins the trap of skipping the
// drain for every request that expects "100 Continue": once the
// middleware has read a byte of the body, net/http has sent the 100 and
// the client sends the whole body (curl does so for every upload over
// 1 MiB). A rejection then must drain it like any other, or the close
// with unread bytes resets the connection under the client's upload
// (curl: "Send failure: Connection reset by peer", no status) behind a
// recorder without Unwrap.
func TestExpectContinueBodyDrainedOnceAsked(t *testing.T) {
	t.Parallel()
	mw := boundhttp.Middleware(limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 10})
	s := httptest.NewUnstartedServer(recorded(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("handler called for a rejected body")
	}))))
	cl := &countingListener{Listener: s.Listener, closed: make(chan time.Time, 1)}
	s.Listener = cl
	s.Start()
	defer s.Close()
	c, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	const size = 8 << 20
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", size)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusContinue {
		t.Fatalf("before the body: %v, %v; want 100 Continue", resp, err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, size))
		wrote <- err
	}()
	resp, err = http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("after the body: %v, %v; want 413", resp, err)
	}
	if err := <-wrote; err != nil {
		t.Errorf("the client's upload failed: %v; want it read to its end by the drain", err)
	}
	<-cl.closed
	if read := cl.read.Load(); read < size {
		t.Errorf("the server read %d bytes of a rejected %d-byte body the client was asked for, want all of it drained", read, size)
	}
}
