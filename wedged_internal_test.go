package boundhttp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// slowLink is a listener whose connections read at about rate bytes per
// second, in pieces of 4 KiB, through small socket buffers: the server end
// of a slow uplink.
type slowLink struct {
	net.Listener
	rate int
}

func (l slowLink) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c.(*net.TCPConn).SetReadBuffer(8 << 10)
	return &slowConn{Conn: c, rate: l.rate}, nil
}

type slowConn struct {
	net.Conn
	rate  int
	start time.Time // of the first read
	read  int64
}

func (c *slowConn) Read(p []byte) (int, error) {
	p = p[:min(len(p), 4<<10)]
	n, err := c.Conn.Read(p)
	if c.start.IsZero() {
		c.start = time.Now()
	}
	c.read += int64(n)
	// The link's pace (the workload, not a synchronisation): no more than
	// rate bytes per second since the first read.
	time.Sleep(time.Until(c.start.Add(time.Duration(c.read) * time.Second / time.Duration(c.rate))))
	return n, err
}

// smallSendBuffer is a dialer whose connections have a small socket send
// buffer, so that a client's writes wait for the slow link.
var smallSendBuffer = &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
	var err error
	rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, 8<<10) })
	return err
}}

// TestSlowUploadSurvivesAStreamEndingBesideIt pins the trap of judging a
// connection wedged by how long a Close waits: on HTTP/2 an agent uploads
// over a slow link while an event stream on the same connection ends
// (closed early, or at its Budget.Timeout); the stream's Close waits for
// net/http's write lock, which the upload holds for each DATA frame (up to
// 512 KiB, a second here), and after abortGrace the Transport closed the
// connection as wedged: the upload failed with "use of closed network
// connection" and was not sent again. Plain net/http completes it. Now a
// connection whose writes move is not wedged: the upload completes with
// its bytes, and the stream's Close returns once the lock is free.
// Sabotage: judging by the wait alone (moving always false) fails the
// upload in both cases.
func TestSlowUploadSurvivesAStreamEndingBesideIt(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"closed", "deadline"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			const rate = 512 << 10 // bytes per second: 4 Mbit/s
			upload := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/2/16)
			sum := sha256.Sum256(upload)
			uploading := make(chan struct{})
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/events" {
					w.Header().Set("Content-Type", "text/event-stream")
					for i := 0; r.Context().Err() == nil && i < 1000; i++ { // bounded: 1000 events
						fmt.Fprintf(w, "data: %d\n\n", i)
						w.(http.Flusher).Flush()
						time.Sleep(20 * time.Millisecond) // the stream's pace
					}
					return
				}
				var buf [64 << 10]byte
				n, _ := io.ReadFull(r.Body, buf[:])
				close(uploading)
				h := sha256.New()
				h.Write(buf[:n])
				io.Copy(h, r.Body)
				io.WriteString(w, hex.EncodeToString(h.Sum(nil)))
			}))
			s.Listener = slowLink{s.Listener, rate}
			s.Config.Protocols = new(http.Protocols)
			s.Config.Protocols.SetUnencryptedHTTP2(true)
			s.Start()
			t.Cleanup(s.Close)

			base := NewBaseTransport()
			base.DialContext = countFraming(smallSendBuffer.DialContext)
			base.Protocols = new(http.Protocols)
			base.Protocols.SetUnencryptedHTTP2(true)
			t.Cleanup(base.CloseIdleConnections)
			b := limits.Budget{MaxWireBytes: 8 << 20, MaxDecodedBytes: 8 << 20}
			if end == "deadline" {
				b.Timeout = 1500 * time.Millisecond
			}
			client := &http.Client{Transport: &Transport{Base: base, Budget: b}}

			req, _ := http.NewRequestWithContext(WithStreaming(t.Context()), http.MethodGet, s.URL+"/events", nil)
			events, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var first [8]byte
			if _, err := io.ReadFull(events.Body, first[:]); err != nil {
				t.Fatalf("first event: %v", err)
			}

			type result struct {
				status int
				body   string
				err    error
			}
			done := make(chan result, 1)
			go func() {
				resp, err := client.Post(s.URL+"/upload", "application/octet-stream", bytes.NewReader(upload))
				if err != nil {
					done <- result{err: err}
					return
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				done <- result{resp.StatusCode, string(got), err}
			}()
			<-uploading // the upload is on the connection, frame by frame
			start := time.Now()
			if end == "closed" {
				events.Body.Close()
			} else {
				io.Copy(io.Discard, events.Body) // until the deadline ends it
				events.Body.Close()
			}
			closed := time.Since(start)
			r := <-done
			if r.err != nil || r.status != http.StatusOK || r.body != hex.EncodeToString(sum[:]) {
				t.Fatalf("upload beside a stream %s (its Close took %v): status %d, %q, %v; want 200 and the upload's hash", end, closed, r.status, r.body, r.err)
			}
			t.Logf("stream %s: its Close took %v; the upload of %d bytes took %v", end, closed, len(upload), time.Since(start))
		})
	}
}
