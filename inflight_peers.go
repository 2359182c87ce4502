package boundhttp

import (
	"net/netip"
	"net/url"
	"strings"
)

// The peers a body's in-flight charges count against (see
// [limits.NewInFlightShare]): on the server the client's connection and its
// address, on the client the host and the address it was reached at. An
// IPv6 address counts by its /64, which one subscriber usually holds whole.

// clientPeers names the peers of a request body: the client's connection
// (its address and port) and its address alone. Behind a proxy every
// request shares the proxy's address; its connections are still told
// apart.
func clientPeers(remoteAddr string) [2]string {
	return [2]string{remoteAddr, peerAddr(addrHost(remoteAddr))}
}

// hostPeers names the peers of a response body: the host as the URL names
// it, in lower case and without a final dot or a port (so that one server
// named in many spellings is one peer), and the address the request's
// connection reached, where the base transport's dialer made it (so that
// one server named by many names is one peer too; a Base of the caller's
// own is told apart by the host alone).
func hostPeers(u *url.URL, w *connWatch) [2]string {
	host := strings.TrimSuffix(u.Hostname(), ".")
	for i := range len(host) {
		if 'A' <= host[i] && host[i] <= 'Z' {
			host = strings.ToLower(host)
			break
		}
	}
	var addr string
	if fc := w.framing.Load(); fc != nil {
		addr = fc.peer
	}
	return [2]string{host, addr}
}

// addrHost returns the host of a "host:port" address ("[v6]:port"
// included), or addr itself when it has no port. Unlike net.SplitHostPort
// it allocates nothing, whatever addr holds.
func addrHost(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 || strings.IndexByte(addr[i:], ']') >= 0 || (addr[0] != '[' && strings.IndexByte(addr[:i], ':') >= 0) {
		return addr // no port: a name, or an IPv6 address bare or in brackets
	}
	host := addr[:i]
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return host
}

// peerAddr returns the peer key of an address: an IPv6 address's /64
// (which allocates), anything else as it is.
func peerAddr(host string) string {
	if strings.IndexByte(host, ':') < 0 {
		return host
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is6() || a.Is4In6() {
		return host
	}
	p, err := a.Prefix(64)
	if err != nil {
		return host
	}
	return p.String()
}
