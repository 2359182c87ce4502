package boundhttp

import (
	"encoding/binary"
	"net"
	"syscall"
	"unsafe"
)

// tcpiBytesAcked is the offset of tcpi_bytes_acked in Linux's struct
// tcp_info (since Linux 4.1; <linux/tcp.h>): the bytes of the connection
// the peer acknowledged, a 64-bit count.
const tcpiBytesAcked = 120

// acked returns the bytes the peer of c acknowledged, and whether the
// system told: c must be a TCP connection, and the kernel's tcp_info long
// enough to hold the count.
func acked(c net.Conn) (int64, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info [256]byte
	size := uint32(len(info))
	var errno syscall.Errno
	if rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
	}) != nil || errno != 0 || size < tcpiBytesAcked+8 {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint64(info[tcpiBytesAcked:])), true
}
