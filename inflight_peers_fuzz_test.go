package boundhttp

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// FuzzPeerKeys: the keys a client's address gives its in-flight share are
// cut from what it is (a host in RemoteAddr's "host:port"), for any text a
// server's RemoteAddr or a handler's Peer could hold; nothing panics; an
// address net.JoinHostPort writes gives its host back.
func FuzzPeerKeys(f *testing.F) {
	for _, s := range []string{"192.0.2.1:80", "[2001:db8::1]:443", "[::1]", "::1", "@", "", ":", "]:[", "[]:1", "h:1:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		host := addrHost(addr)
		if !strings.Contains(addr, host) {
			t.Fatalf("addrHost(%q) = %q, not part of it", addr, host)
		}
		peerAddr(host)
		if h, port, err := net.SplitHostPort(addr); err == nil && !strings.ContainsAny(h, "[]") {
			if _, perr := strconv.Atoi(port); perr == nil && net.JoinHostPort(h, port) == addr && addrHost(addr) != h {
				t.Fatalf("addrHost(%q) = %q, want %q", addr, addrHost(addr), h)
			}
		}
	})
}

// FuzzContentLengthDecimal: a Content-Length is shared with the handler only
// when it is exactly the decimal the body's length is written as.
func FuzzContentLengthDecimal(f *testing.F) {
	for _, s := range []string{"0", "5", "005", "+5", "-1", "9223372036854775807", "9223372036854775808", "18446744073709551616", " 5", "5 "} {
		f.Add(s, int64(5))
	}
	f.Fuzz(func(t *testing.T, s string, n int64) {
		want := n >= 0 && strconv.FormatInt(n, 10) == s
		if got := isDecimal(s, n); got != want {
			t.Fatalf("isDecimal(%q, %d) = %v, want %v", s, n, got, want)
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && v >= 0 && strconv.FormatInt(v, 10) == s && !isDecimal(s, v) {
			t.Fatalf("isDecimal(%q, %d) = false", s, v)
		}
	})
}
