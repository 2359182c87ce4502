package boundhttp

import (
	"encoding/binary"
	"net"
	"sync"
	"syscall"
	"unsafe"
)

// tcpiBytesAcked is the offset of tcpi_bytes_acked in Linux's struct
// tcp_info (since Linux 4.1; <linux/tcp.h>): the bytes of the connection
// the peer acknowledged, a 64-bit count.
const tcpiBytesAcked = 120

// An ackProbe reads the bytes the peer of one TCP connection acknowledged.
// It is made once per connection, and a look allocates nothing. Safe for
// concurrent use.
type ackProbe struct {
	rc    syscall.RawConn
	mu    sync.Mutex
	get   func(fd uintptr) // p.getsockopt, bound once
	info  [tcpiBytesAcked + 8]byte
	size  uint32
	errno syscall.Errno
}

// newAckProbe returns the probe of c, or nil when c is no TCP connection
// or the kernel does not tell.
func newAckProbe(c net.Conn) *ackProbe {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	p := &ackProbe{rc: rc}
	p.get = p.getsockopt
	if _, ok := p.acked(); !ok {
		return nil
	}
	return p
}

func (p *ackProbe) getsockopt(fd uintptr) {
	p.size = uint32(len(p.info))
	_, _, p.errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
		uintptr(unsafe.Pointer(&p.info[0])), uintptr(unsafe.Pointer(&p.size)), 0)
}

// acked returns the bytes the peer acknowledged, and whether the kernel
// told.
func (p *ackProbe) acked() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rc.Control(p.get) != nil || p.errno != 0 || p.size < tcpiBytesAcked+8 {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint64(p.info[tcpiBytesAcked:])), true
}
