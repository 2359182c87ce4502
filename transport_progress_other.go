//go:build !linux

package boundhttp

import "net"

// acked reports that the system does not tell how many bytes the peer of a
// connection acknowledged: a connection's progress is then the bytes of
// the Writes that returned (see framingConn.progress).
func acked(net.Conn) (int64, bool) { return 0, false }
