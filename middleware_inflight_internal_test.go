package boundhttp

import (
	"context"
	"net"
	"net/url"
	"testing"
)

// TestAddrHostOfEveryAddressForm: the address part of a client's peer key,
// for every form RemoteAddr takes, allocation-free.
func TestAddrHostOfEveryAddressForm(t *testing.T) {
	for _, tt := range []struct{ addr, want string }{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[2001:db8::1]:443", "2001:db8::1"},
		{"[::1]:80", "::1"},
		{"2001:db8::1", "2001:db8::1"},
		{"[2001:db8::1]", "[2001:db8::1]"},
		{"host", "host"},
		{"", ""},
		{":80", ""},
		{"pipe", "pipe"},
	} {
		if got := addrHost(tt.addr); got != tt.want {
			t.Errorf("addrHost(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { addrHost("192.0.2.1:1234"); addrHost("") }); n != 0 {
		t.Errorf("addrHost allocates %v times", n)
	}
}

// TestPeerKeysOfEveryForm: a client at an IPv6 address counts by its /64;
// a host named in any case, with a final dot or a port, is one peer, and
// the address the connection reached is the other key.
func TestPeerKeysOfEveryForm(t *testing.T) {
	for _, tt := range []struct{ remote, conn, addr string }{
		{"192.0.2.1:1234", "192.0.2.1:1234", "192.0.2.1"},
		{"[2001:db8:1:2:3:4:5:6]:443", "[2001:db8:1:2::9]:1", "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.1]:80", "[::ffff:192.0.2.1]:80", "::ffff:192.0.2.1"},
		{"@", "@", "@"},
	} {
		if got := clientPeers(tt.remote); got != [2]string{tt.remote, tt.addr} {
			t.Errorf("clientPeers(%q) = %q, want [%q %q]", tt.remote, got, tt.remote, tt.addr)
		}
	}
	var w connWatch
	for _, raw := range []string{"http://Example.COM./x", "http://example.com:8080/", "https://EXAMPLE.com/"} {
		u, _ := url.Parse(raw)
		if got := hostPeers(u, &w); got != [2]string{"example.com", ""} {
			t.Errorf("hostPeers(%q) = %q, want [example.com \"\"]", raw, got)
		}
	}
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	fc := countFraming(func(context.Context, string, string) (net.Conn, error) { return addrConn{c, "[2001:db8::1]:443"}, nil })
	conn, _ := fc(context.Background(), "tcp", "x")
	w.framing.Store(conn.(*framingConn))
	u, _ := url.Parse("http://a.example/")
	if got := hostPeers(u, &w); got != [2]string{"a.example", "2001:db8::/64"} {
		t.Errorf("hostPeers with a connection = %q", got)
	}
}

// addrConn is a connection with a remote address of the test's choosing.
type addrConn struct {
	net.Conn
	addr string
}

func (c addrConn) RemoteAddr() net.Addr { return fakeAddr(c.addr) }

type fakeAddr string

func (fakeAddr) Network() string  { return "tcp" }
func (a fakeAddr) String() string { return string(a) }
