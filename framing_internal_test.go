package boundhttp

import (
	"errors"
	"net"
	"testing"

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
// one byte per byte it wrote: exactly that passes, one more fails. The
// writes are counted in pieces of at most writePiece bytes.
// Sabotage: leaving the written bytes out of allowed fails the 64 MiB row
// (and the honest 320 MiB upload of internal/honest).
func TestFramingBoundCreditsWhatTheClientWrote(t *testing.T) {
	t.Parallel()
	for _, written := range []int64{0, 1, writePiece - 1, writePiece, writePiece + 1, 3 << 20, 64 << 20} {
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
		allowed := DefaultFramingSlack + written
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

// pieceConn records the size of each write it gets.
type pieceConn struct {
	endlessConn
	sizes []int
}

func (c *pieceConn) Write(p []byte) (int, error) {
	c.sizes = append(c.sizes, len(p))
	return len(p), nil
}

// TestFramingConnWritesInPieces: a write larger than writePiece reaches
// the socket in pieces of writePiece (so that its progress shows, see
// connWatch.moving); a TLS record (16 KiB of data and its overhead) goes
// whole. Sabotage: writing p whole fails it.
func TestFramingConnWritesInPieces(t *testing.T) {
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
		if len(pc.sizes) != len(tt.want) {
			t.Errorf("write of %d: pieces %v, want %v", tt.size, pc.sizes, tt.want)
			continue
		}
		for i := range tt.want {
			if pc.sizes[i] != tt.want[i] {
				t.Errorf("write of %d: pieces %v, want %v", tt.size, pc.sizes, tt.want)
				break
			}
		}
	}
}
