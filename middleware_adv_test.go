package boundhttp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestStreamingReadDeadlineOutlivesBody: in streaming mode Budget.Timeout
// is a read deadline on the connection. A handler that decodes its JSON
// and stops reading before io.EOF (json.Decoder does) must not have the
// deadline fire later: net/http's background read, started when the wire
// body ended, would fail with it and cancel the request's context in the
// middle of a response that has nothing left to read.
func TestStreamingReadDeadlineOutlivesBody(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: timeout}, Streaming: true})
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
}

// TestStreamingCloseDuringBlockedRead: a handler that closes its body from
// another goroutine (a watchdog on the request's context, say) while its
// own Read waits for the client must not have the body's pooled decoder
// state handed back under that Read: the Read resumes when the client's
// bytes arrive, and must not run on a decoder and buffer already returned
// to their pools (here it would panic on the reset buffer; under load
// another request would be decoding with them).
func TestStreamingCloseDuringBlockedRead(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	closing := make(chan struct{})
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := make(chan struct{})
		closed := make(chan error, 1)
		go func() {
			<-first
			time.Sleep(100 * time.Millisecond) // the handler's next Read waits for the client
			close(closing)
			closed <- r.Body.Close()
		}()
		buf := make([]byte, 512)
		_, err := r.Body.Read(buf)
		close(first)
		for range 100000 {
			if err != nil {
				break
			}
			_, err = r.Body.Read(buf)
		}
		select {
		case cerr := <-closed:
			fmt.Fprintf(w, "read: %v; close: %v", err != nil, cerr)
		case <-time.After(5 * time.Second):
			fmt.Fprintf(w, "read: %v; Close did not return", err != nil)
		}
	})))
	t.Cleanup(s.Close)
	raw := make([]byte, 200000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte('a' + rng.IntN(26)) // compressible a little: the decoder needs many reads
	}
	data := encode("gzip", raw)
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(data))
	conn.Write(data[:len(data)/2])
	select {
	case <-closing:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never closed its body")
	}
	time.Sleep(100 * time.Millisecond) // Close is under way
	go conn.Write(data[len(data)/2:])  // may fail once the server closes
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("body closed during a blocked Read: no answer (%v); want the handler's", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(answer) != "read: true; close: <nil>" {
		t.Errorf("body closed during a blocked Read: %d %q, want 200 %q", resp.StatusCode, answer, "read: true; close: <nil>")
	}
}

// blockingWriter blocks its first Write until released.
type blockingWriter struct {
	entered, release chan struct{}
	n                int
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	if b.n == 0 {
		close(b.entered)
		select {
		case <-b.release:
		case <-time.After(5 * time.Second):
		}
	}
	b.n += len(p)
	return len(p), nil
}

// TestWholeBodyCloseDuringWriteTo: in whole-body mode the handler's body is
// pooled chunks. Closing it from another goroutine while io.Copy (the
// body's WriteTo) is inside a Write must not hand the chunks back to their
// pool under that Write: the Write still reads the chunk (another request
// could be filling it by then), and WriteTo then indexed an emptied list
// (a panic).
func TestWholeBodyCloseDuringWriteTo(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			<-bw.entered
			r.Body.Close()
			close(bw.release)
		}()
		n, err := io.Copy(bw, r.Body)
		<-closed
		fmt.Fprintf(w, "copied %d, %v", n, err)
	})))
	t.Cleanup(s.Close)
	const size = 300
	status, answer := post(t, s.URL, "", text(size), false)
	if want := fmt.Sprintf("copied %d, <nil>", size); status != 200 || answer != want {
		t.Errorf("body closed during its WriteTo: %d %q, want 200 %q", status, answer, want)
	}
}

// TestWholeBodyCloseDuringWriteToReportsReadAfterClose (trap: a closed
// body's error that depends on the path that noticed the Close): a
// handler's body closed from another goroutine while io.Copy (its WriteTo)
// is between two chunks must fail as every Read after Close does on the
// server, with http.ErrBodyReadAfterClose, the error handlers written for
// net/http look for; WriteTo returned the engine's own error.
func TestWholeBodyCloseDuringWriteToReportsReadAfterClose(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
		closed := make(chan struct{})
		go func() {
			defer close(closed)
			<-bw.entered
			r.Body.Close()
			close(bw.release)
		}()
		_, err := io.Copy(bw, r.Body)
		<-closed
		_, rerr := r.Body.Read(make([]byte, 1))
		fmt.Fprintf(w, "copy: %v; read: %v", errors.Is(err, http.ErrBodyReadAfterClose), errors.Is(rerr, http.ErrBodyReadAfterClose))
	})))
	t.Cleanup(s.Close)
	status, answer := post(t, s.URL, "", text(256<<10), false) // several chunks
	if want := "copy: true; read: true"; status != 200 || answer != want {
		t.Errorf("body closed between two chunks of its WriteTo: %d %q, want 200 %q", status, answer, want)
	}
}

// TestFramingErrorNotEchoed pins the trap of echoing attacker bytes for
// the errors of the server's own body reader: net/http quotes a malformed
// chunked trailer line in its error, and that line is the client's, part
// of the body section. It must not reach the problem document, the log
// record or the error a streaming handler reads.
func TestFramingErrorNotEchoed(t *testing.T) {
	t.Parallel()
	const marker = "SECRET-TRAILER-NO-COLON"
	for _, streaming := range []bool{false, true} {
		var logs bytes.Buffer
		handlerErr := make(chan string, 1)
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: streaming,
			Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				handlerErr <- err.Error()
				return
			}
			io.WriteString(w, "handled")
		})))
		conn, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n"+marker+"\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		conn.Close()
		s.Close()
		if resp.StatusCode != 400 || problem(t, string(answer)).Stage != "integrity" || strings.Contains(string(answer), marker) {
			t.Errorf("streaming %v, malformed trailer: %d %s; want 400 stage integrity without the trailer line", streaming, resp.StatusCode, answer)
		}
		if strings.Contains(logs.String(), marker) {
			t.Errorf("streaming %v, malformed trailer: log record %s holds the trailer line", streaming, logs.String())
		}
		select {
		case e := <-handlerErr:
			if strings.Contains(e, marker) {
				t.Errorf("streaming %v, malformed trailer: the handler read error %q, which holds the trailer line", streaming, e)
			}
		default:
		}
	}
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

// TestRejectedStalledBodyDoesNotHoldConnection: after a rejection net/http
// still reads up to 256 KiB of the unread body (looking for its end)
// before it lingers and closes. With Budget.Timeout set, that read must
// end by the same deadline: a client that stalls after its answer (a 408
// for a slow body, a 413 for a declared length over the limit) must not
// hold the connection and its goroutine for as long as it likes.
func TestRejectedStalledBodyDoesNotHoldConnection(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, request string
		status        int
	}{
		{"slow body", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nfirst", 408},
		{"declared over the limit", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\nfirst", 413},
		{"chunked over the limit", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5dc\r\n" + strings.Repeat("x", 1500), 413},
	} {
		s := echoServer(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxWireBytes: 1000, Timeout: 300 * time.Millisecond}})
		conn, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, tt.request)
		conn.SetReadDeadline(time.Now().Add(4 * time.Second))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		io.ReadAll(resp.Body)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
		// The client sends nothing more: the server must end the exchange.
		if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: after the answer, a stalled client still holds the connection (%v); want it closed", tt.name, err)
		}
	}
}

// unwrapOnly is a writer wrapper of the modern kind: it offers Unwrap for
// http.ResponseController and none of the optional interfaces.
type unwrapOnly struct{ http.ResponseWriter }

func (u unwrapOnly) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// TestStreamingControllerFlushCountsAsWriting: in streaming mode the
// middleware answers a breach only when the handler has not started its
// answer. A handler that started it with http.ResponseController's Flush
// (headers out, status 200) must count as having written, also when the
// writer under the middleware is a wrapper with only Unwrap: the
// controller then reaches the server's writer through the middleware's
// Unwrap, and a problem document was appended to the handler's 200.
func TestStreamingControllerFlushCountsAsWriting(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, Budget: limits.Budget{MaxWireBytes: 10}})
	if err != nil {
		t.Fatal(err)
	}
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil { // read on after the headers
			t.Errorf("ResponseController.EnableFullDuplex: %v", err)
		}
		if err := rc.Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
		io.ReadAll(r.Body)
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(unwrapOnly{w}, r)
	}))
	t.Cleanup(s.Close)
	req, _ := http.NewRequest("POST", s.URL, struct{ io.Reader }{strings.NewReader(strings.Repeat("x", 100))})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Contains(string(answer), "urn:boundhttp:problem") {
		t.Errorf("breach after the handler flushed its 200: %d %q; want the handler's 200 and no problem document in it", resp.StatusCode, answer)
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

// TestStreamingCloseDuringBlockedReadHTTP2 is the same over HTTP/2, where
// closing the request body ends the blocked Read at once: the decoders
// must still be released only after that Read has returned (run with
// -race to see the difference).
func TestStreamingCloseDuringBlockedReadHTTP2(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	closing := make(chan struct{})
	s := httptest.NewUnstartedServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := make(chan struct{})
		closed := make(chan error, 1)
		go func() {
			<-first
			time.Sleep(100 * time.Millisecond) // the handler's next Read waits for the client
			close(closing)
			closed <- r.Body.Close()
		}()
		buf := make([]byte, 512)
		_, err := r.Body.Read(buf)
		close(first)
		for range 100000 {
			if err != nil {
				break
			}
			_, err = r.Body.Read(buf)
		}
		select {
		case cerr := <-closed:
			fmt.Fprintf(w, "%s read: %v; close: %v", r.Proto, err != nil, cerr)
		case <-time.After(5 * time.Second):
			fmt.Fprintf(w, "read: %v; Close did not return", err != nil)
		}
	})))
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	pr, pw := io.Pipe()
	data := encode("gzip", text(200000))
	go pw.Write(data[:len(data)/2]) // and nothing more until the end of the test
	defer pw.Close()
	req, _ := http.NewRequest("POST", s.URL, pr)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "HTTP/2.0 read: true; close: <nil>"; resp.StatusCode != 200 || string(answer) != want {
		t.Errorf("body closed during a blocked Read over HTTP/2: %d %q, want 200 %q", resp.StatusCode, answer, want)
	}
}
