package probe

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestHugeResponseHeader: a target that answers with a header that never
// ends must not make the probe read (and keep in memory) all of it: the
// response header is bounded like net/http's Transport bounds it, and the
// exchange is reported as an error. The server tries to send 64 MiB of
// header; a bounded reader closes the connection long before, so the
// server's writes fail. Found: the probe read the whole 64 MiB into one
// header line.
func TestHugeResponseHeader(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wrote := make(chan int64, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			wrote <- -1
			return
		}
		defer conn.Close()
		go http.ReadRequest(bufio.NewReader(conn)) // drain the request
		var n int64
		w := bufio.NewWriterSize(conn, 64<<10)
		_, err = w.WriteString("HTTP/1.1 413 Too Large\r\nX-Huge: ")
		chunk := strings.Repeat("a", 64<<10)
		for i := 0; i < 1024 && err == nil; i++ { // 64 MiB
			var k int
			k, err = w.WriteString(chunk)
			n += int64(k)
		}
		if err == nil {
			err = w.Flush()
		}
		if err == nil {
			n = -2 // everything was taken
		}
		wrote <- n
	}()
	u, _ := url.Parse("http://" + ln.Addr().String())
	tg := &target{url: u, method: http.MethodPost, header: http.Header{}, timeout: 20 * time.Second}
	b, err := newBody(shape{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tg.send(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Outcome == OutcomeAnswered {
		t.Errorf("a 64 MiB header was taken as an answer: %+v", a)
	}
	if n := <-wrote; n == -2 {
		t.Errorf("the probe read all 64 MiB of the response header (outcome %s, error %q)", a.Outcome, a.Error)
	}
}
