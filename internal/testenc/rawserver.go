package testenc

import (
	"bufio"
	"net"
	"net/http"
	"testing"
)

// RawServer starts a TCP server on a loopback port that plays a peer no
// HTTP library would: for each connection it reads one request and hands
// the connection and the request (nil when none could be read) to answer,
// which writes whatever bytes it likes; the connection is closed when answer
// returns. It returns the base URL; the listener closes when the test ends.
func RawServer(t testing.TB, answer func(conn net.Conn, r *http.Request)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r, err := http.ReadRequest(bufio.NewReader(conn))
				if err != nil {
					r = nil
				}
				answer(conn, r)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}
