package boundhttp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// TestNginxRelaysRejectionNot502 pins the trap of closing with unread body
// bytes on the socket: nginx's default proxy_pass sends Connection: close
// upstream, and a Middleware that closes without lingering has its 413
// destroyed by the kernel's reset, so the client gets nginx's 502. Every
// oversized body and every bomb must come back as the Middleware's own 413
// problem+json.
func TestNginxRelaysRejectionNot502(t *testing.T) {
	t.Parallel()
	mw := boundhttp.Middleware(proxyBudget)
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	})))
	defer s.Close()
	// A streaming handler that answers the breach itself, behind /own/.
	// Its wire limit lets nginx's Content-Length through: the breach is
	// decoded, with most of a 2 MiB body unread.
	streaming, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget:    limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 512 << 10},
		Streaming: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	own := httptest.NewServer(streaming(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "too large", http.StatusRequestEntityTooLarge)
		}
	})))
	defer own.Close()
	base := runNginx(t, "", fmt.Sprintf(`
		client_max_body_size 4m;
		location / { proxy_pass %s; }
		location /own/ { proxy_pass %s; }`, s.URL, own.URL))

	bomb := make([]byte, 64<<20) // 64 MiB of zeros
	type body struct {
		path   string
		coding string
		data   []byte
		n      int
	}
	bodies := []body{
		{"/", "", text(700 << 10), 40},
		{"/", "gzip", encode("gzip", bomb), 10},
		{"/", "zstd", encode("zstd", bomb), 10},
		{"/own/", "", text(2 << 20), 20},
	}
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, b := range bodies {
		for range b.n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				req, _ := http.NewRequest("POST", base+b.path, bytes.NewReader(b.data))
				if b.coding != "" {
					req.Header.Set("Content-Encoding", b.coding)
				}
				c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
				resp, err := c.Do(req)
				key := ""
				if err != nil {
					key = "error " + err.Error()
				} else {
					data, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					var p boundhttp.Problem
					json.Unmarshal(data, &p)
					key = fmt.Sprintf("%d %s stage=%q", resp.StatusCode, resp.Header.Get("Content-Type"), p.Stage)
				}
				mu.Lock()
				got[fmt.Sprintf("%s %-4s %s", b.path, b.coding, key)]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	want := map[string]int{
		`/      413 application/problem+json stage="wire"`:    40,
		`/ gzip 413 application/problem+json stage="decoded"`: 10,
		`/ zstd 413 application/problem+json stage="decoded"`: 10,
		`/own/      413 text/plain; charset=utf-8 stage=""`:   20,
	}
	bad := 0
	for k, n := range got {
		if want[k] != n {
			bad++
		}
	}
	if bad > 0 || len(got) != len(want) {
		var lines []string
		for k, n := range got {
			lines = append(lines, fmt.Sprintf("%3d × %s", n, k))
		}
		t.Errorf("through nginx:\n%s\nwant 40 wire and 20 decoded 413 problems and 20 of the handler's own 413s, no 502", strings.Join(lines, "\n"))
	}
}

// TestConnectionCloseClientReadsRejection pins the same trap without a
// proxy: a client that sends Connection: close and its whole body before
// reading must still read the 413, not a reset.
func TestConnectionCloseClientReadsRejection(t *testing.T) {
	t.Parallel()
	mw := boundhttp.Middleware(proxyBudget)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	data := text(700 << 10)
	declared := "Content-Length: " + fmt.Sprint(len(data)) + "\r\n"
	for _, tt := range []struct {
		name   string
		h      http.Handler
		header string
		body   []byte
	}{
		{"direct", h, declared, data},
		// Another middleware's writer in between: the linger must reach
		// net/http's own writer through Unwrap.
		{"wrapped writer", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(unwrapper{w}, r)
		}), declared, data},
	} {
		s := httptest.NewServer(tt.h)
		defer s.Close()
		ok := 0
		var fails []string
		for range 20 {
			status, err := rawPost(s.Listener.Addr().String(), "Connection: close\r\n"+tt.header, tt.body)
			if err == nil && status == 413 {
				ok++
			} else {
				fails = append(fails, fmt.Sprintf("%d %v", status, err))
			}
		}
		if ok != 20 {
			t.Errorf("%s: Connection: close client read the 413 in %d of 20 tries; failures: %q", tt.name, ok, fails)
		}
	}
}

// unwrapper is another middleware's ResponseWriter.
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

// TestExpectContinueRefusedWithout100 pins that the linger reads no body: a
// body refused on its declared size gets the 413 and no "100 Continue".
func TestExpectContinueRefusedWithout100(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(boundhttp.Middleware(proxyBudget)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	defer s.Close()
	c, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", 700<<10)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 413 ") {
		t.Errorf("Expect: 100-continue with a declared 700 KiB: first line %q, %v; want a 413", line, err)
	}
}

// rawPost writes a request with the given extra header lines and the whole
// body before reading, as simple clients do, and returns the status.
func rawPost(addr, header string, data []byte) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	// Like Python's http.client: the whole request, then the response; a
	// failed write (broken pipe, reset) is the end.
	if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\n"+header+"\r\n"); err != nil {
		return 0, err
	}
	for p := data; len(p) > 0; {
		n := min(len(p), 64<<10)
		if _, err := c.Write(p[:n]); err != nil {
			return 0, err
		}
		p = p[n:]
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); err != nil {
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
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
