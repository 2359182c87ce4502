package honest

import "syscall"

// narrowSocket makes a listening socket's connections slow to take data:
// a small receive buffer, and a small MSS in the SYN-ACK, which keeps the
// peer's send buffer small too (Linux sizes it from the MSS and the
// congestion window, which a peer held back by a small receive window does
// not grow). Without it a loopback client's send buffer grows to several
// MiB and no write of it ever blocks for long.
func narrowSocket(fd uintptr) error {
	if err := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 1460); err != nil {
		return err
	}
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 16<<10)
}
