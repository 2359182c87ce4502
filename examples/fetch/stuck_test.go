package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
)

// caOf writes the certificate the TLS server at addr presents to a PEM
// file and returns its path, for -ca.
func caOf(t *testing.T, addr string) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	cert := conn.ConnectionState().PeerCertificates[0].Raw
	conn.Close()
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFetchReturnsFromStuckServer pins the trap of a server that stops
// while the body is on its way, as the fetch tool meets it: an HTTPS
// HTTP/2 server that sends the headers and 16 KiB of body, then never
// reads again and either writes PING frames in a loop (net/http's client
// answers each with the connection's write lock held, which blocks once the
// socket buffers fill) or writes nothing more. `fetch -body-timeout 4s
// -timeout 8s` must return a rejection before its 8 s -timeout passes,
// not hang until killed. The PINGs are framing overhead, so the base
// transport's framing bound may end that fetch first (about 2.6 MB of
// PINGs, under a second); if the client's writes block before that, the
// body timeout and the Transport's abort of the wedged connection end it
// (about 4.5 s). A silent server is ended by the body timeout (4 s).
func TestFetchReturnsFromStuckServer(t *testing.T) {
	t.Parallel()
	for _, pings := range []bool{true, false} {
		t.Run(map[bool]string{true: "PINGs", false: "silent"}[pings], func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			defer close(done)
			url, _ := testenc.H2Server(t, true, func(c *testenc.H2Conn) {
				id, err := c.NextRequest()
				if err != nil || c.Headers(id, false, ":status", "200", "content-type", "text/plain") != nil ||
					c.Data(id, bytes.Repeat([]byte("x"), 16<<10), 0, false) != nil {
					return
				}
				for pings {
					select {
					case <-done:
						return
					default:
					}
					if c.WriteFrame(testenc.H2Ping, 0, 0, make([]byte, 8)) != nil {
						return
					}
				}
				<-done
			})
			ca := caOf(t, url[len("https://"):])
			type outcome struct {
				code int
				out  []byte
			}
			ended := make(chan outcome, 1)
			start := time.Now()
			go func() {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), []string{"-ca", ca, "-body-timeout", "4s", "-timeout", "8s", url}, &stdout, &stderr)
				ended <- outcome{code, append(stdout.Bytes(), stderr.Bytes()...)}
			}()
			select {
			case o := <-ended:
				elapsed := time.Since(start)
				var r boundhttp.Result
				json.Unmarshal(o.out, &r)
				if o.code != exitRejected || r.Rejection == nil || elapsed >= 8*time.Second {
					t.Errorf("fetch returned %d after %v, want %d (rejected) before 8 s: %.300s", o.code, elapsed, exitRejected, o.out)
				}
				t.Logf("returned after %v: %s %+v", elapsed, r.Status, r.Rejection)
			case <-time.After(20 * time.Second):
				t.Fatalf("fetch -body-timeout 4s -timeout 8s has not returned after 20 s")
			}
		})
	}
}
