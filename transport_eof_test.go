package boundhttp_test

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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
