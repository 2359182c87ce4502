package boundhttp

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// endlessConn is a connection whose writes all go and whose reads always
// fill the buffer: the peer of a framingConn whose counts alone are under
// test.
type endlessConn struct{ net.Conn }

func (endlessConn) Write(p []byte) (int, error) { return len(p), nil }
func (endlessConn) Read(p []byte) (int, error)  { return len(p), nil }

// TestFramingBoundCreditsWhatTheClientWrote pins the trap of counting a
// server's answers to the client's own bytes as overhead of a response
// body: an honest HTTP/2 upload draws WINDOW_UPDATE frames from the server
// (about 26 bytes per 4 KiB it reads, more on TLS), and a 320 MiB POST
// failed after about 300 MiB with "framing: observed 2100300 > limit
// 2097152", every other request on the connection with it. A connection
// may now read, besides its slack and DefaultFramingRatio per body byte,
// one byte per writeCredit (16) bytes it wrote: exactly that passes, one
// more fails.
// Sabotage: leaving the written bytes out of allowed fails every row but
// the first (and the honest 320 MiB upload of internal/honest).
func TestFramingBoundCreditsWhatTheClientWrote(t *testing.T) {
	t.Parallel()
	for _, written := range []int64{0, 1, 16<<10 - 1, 16 << 10, 16<<10 + 1, 3 << 20, 64 << 20} {
		fc := &framingConn{Conn: endlessConn{}}
		fc.grant()
		buf := make([]byte, 512<<10) // a DATA frame's worth, written as one
		for left := written; left > 0; {
			k := min(left, int64(len(buf)))
			if n, err := fc.Write(buf[:k]); n != int(k) || err != nil {
				t.Fatalf("write of %d: %d, %v", k, n, err)
			}
			left -= k
		}
		if got := fc.wrote.Load(); got != written {
			t.Fatalf("wrote %d, counted %d", written, got)
		}
		allowed := DefaultFramingSlack + written/writeCredit
		rbuf := make([]byte, 1<<20)
		var read int64
		for read < allowed { // exactly the allowance passes
			n, err := fc.Read(rbuf[:min(int64(len(rbuf)), allowed-read)])
			if err != nil {
				t.Fatalf("after writing %d: read %d of the %d allowed: %v", written, read, allowed, err)
			}
			read += int64(n)
		}
		_, err := fc.Read(rbuf[:1]) // one more byte does not
		var le *limits.Error
		if !errors.As(err, &le) || le.Field != "framing" || le.Limit != allowed || le.Observed != allowed+1 {
			t.Errorf("after writing %d and reading %d: %v, want the framing bound at %d", written, read, err, allowed)
		}
	}
}

// TestProgressMovesWhileOneWriteWaits: a connection's progress, which
// tells a slow connection from a wedged one, moves while a single large
// Write waits on a slow peer (the bytes the peer acknowledged, on Linux),
// and, when the peer stops reading, moves no further than its buffers.
// Sabotage: counting only the Writes that returned leaves it still during
// the Write.
func TestProgressMovesWhileOneWriteWaits(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := smallSendBuffer.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.(*net.TCPConn).SetReadBuffer(256 << 10)
	fc := &framingConn{Conn: c, acks: newAckProbe(c)}
	if fc.acks == nil {
		if runtime.GOOS == "linux" {
			t.Fatal("Linux did not tell the bytes acknowledged")
		}
		t.Skip("the system does not tell the bytes acknowledged")
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := fc.Write(make([]byte, 16<<20)) // one Write, as net/http writes a DATA frame
		wrote <- err
	}()
	reading := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		buf := make([]byte, 16<<10)
		for i := 0; ; i++ {
			select {
			case <-stop:
				close(reading)
				return
			default:
			}
			if _, err := peer.Read(buf); err != nil {
				close(reading)
				return
			}
			time.Sleep(10 * time.Millisecond) // a slow peer, about 1.6 MB/s: the workload's pace
		}
	}()
	// Five advances of progress, each seen before the Write returned: the
	// looks wait for the peer's reads (polled, up to 30 s each, so that a
	// loaded machine only slows them), not for a fixed time.
	var last int64
	for i := range 5 {
		deadline := time.Now().Add(30 * time.Second)
		p := fc.progress()
		for p <= last && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
			p = fc.progress()
		}
		select {
		case err := <-wrote:
			t.Fatalf("the 16 MiB Write returned (%v) before advance %d: the test proves nothing", err, i)
		default:
		}
		if p <= last {
			t.Fatalf("advance %d: progress %d, not past %d in 30 s, while the peer reads", i, p, last)
		}
		last = p
	}
	close(stop)
	<-reading
	// The peer's kernel takes bytes until its receive buffer (256 KiB,
	// which Linux doubles) is full; then nothing more moves.
	at := fc.progress()
	time.Sleep(time.Second)
	if p := fc.progress(); p-at > 1<<20 {
		t.Errorf("progress moved by %d with the peer not reading, more than its buffers hold", p-at)
	}
}

// pieceConn records the size of each write it gets.
type pieceConn struct {
	endlessConn
	sizes []int
}

func (c *pieceConn) Write(p []byte) (int, error) {
	c.sizes = append(c.sizes, len(p))
	return len(p), nil
}

// TestWritesInPiecesWhereNoAcknowledgementsShow: on a connection whose
// system does not tell the bytes acknowledged (not Linux, or not TCP), a
// write larger than writePiece reaches the socket in pieces of writePiece,
// so that its progress shows; a TLS record (16 KiB of data and its
// overhead) goes whole; where acknowledgements show, writes go whole.
// Sabotage: writing p whole everywhere fails the last row (and the slow
// upload of TestSlowUploadSurvivesAStreamEndingBesideIt off Linux).
func TestWritesInPiecesWhereNoAcknowledgementsShow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		size int
		want []int
	}{
		{0, nil},
		{16<<10 + 22, []int{16<<10 + 22}},
		{writePiece, []int{writePiece}},
		{2*writePiece + 1, []int{writePiece, writePiece, 1}},
	} {
		pc := &pieceConn{}
		fc := &framingConn{Conn: pc}
		if n, err := fc.Write(make([]byte, tt.size)); n != tt.size || err != nil {
			t.Fatalf("write of %d: %d, %v", tt.size, n, err)
		}
		if fmt.Sprint(pc.sizes) != fmt.Sprint(tt.want) {
			t.Errorf("write of %d: pieces %v, want %v", tt.size, pc.sizes, tt.want)
		}
		if got := fc.wrote.Load(); got != int64(tt.size) {
			t.Errorf("write of %d: counted %d", tt.size, got)
		}
	}
	pc := &pieceConn{}
	fc := &framingConn{Conn: pc, acks: &ackProbe{}}
	fc.Write(make([]byte, 2*writePiece+1))
	if fmt.Sprint(pc.sizes) != fmt.Sprint([]int{2*writePiece + 1}) {
		t.Errorf("with acknowledgements: pieces %v, want one write", pc.sizes)
	}
}
