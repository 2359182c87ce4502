package boundhttp

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// inflightHeaders sets Retry-After on the answer to a body the budget may
// take later (not on one that could never fit): when the budget's state
// says room is expected to free (see [limits.InFlight]), in whole seconds,
// at least 1.
func inflightHeaders(w http.ResponseWriter, e *limits.Error, p *inflight.Pool) {
	if e.Stage == limits.StageInFlight && e.Observed <= e.Limit {
		after := time.Second
		if p != nil {
			after = max(inflight.RetryAfter(p, e.Observed), time.Second)
		}
		w.Header().Set("Retry-After", strconv.Itoa(int(after/time.Second)))
	}
}

// clientPeers names the peers a request body's in-flight charges count
// against: the client's connection (its address and port) and its address
// alone. Behind a proxy every request shares the proxy's address; its
// connections are still told apart.
func clientPeers(remoteAddr string) [2]string {
	return [2]string{remoteAddr, addrHost(remoteAddr)}
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
