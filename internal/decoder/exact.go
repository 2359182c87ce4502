package decoder

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/limits"
)

// An Exact body has no coding and is framed by its declared length: its
// source returns at most Length bytes, and fails with io.ErrUnexpectedEOF
// when the connection ends sooner (net/http's own body of a request with a
// Content-Length does both). Such a body needs no decoder: [ReadExact]
// reads it straight into one chunk.
type Exact struct {
	Src    io.Reader
	Length int64 // 0 < Length <= chunk.MaxSize, and within the budget's MaxWireBytes and MaxDecodedBytes
	Config Config
	// Ctx and Wait bound the wait for room in the in-flight budget, as
	// [Reader.SetInFlightWait] does.
	Ctx  context.Context
	Wait time.Duration
	// Peers names the peers the charge counts against (see
	// [Reader.SetPeers]).
	Peers [2]string
}

// Fits reports whether a body of n declared bytes with no coding may be
// read by [ReadExact] under b (defaults applied) and c: it fits one chunk
// and the budget, no character limit asks for a count, and no option
// refuses identity.
func Fits(n int64, b limits.Budget, c *Config) bool {
	return n > 0 && n <= chunk.MaxSize && n <= b.MaxWireBytes && n <= b.MaxDecodedBytes &&
		b.MaxDecodedRunes <= 0 && !c.requireChecksum
}

// errLonger reports an exact source that went on past its declared length,
// which its framing forbids.
var errLonger = errors.New("decoding: body longer than its declared length")

// ReadExact reads e's body to its end into one pooled chunk: what
// [Reader.ReadAllChunks] does for such a body, with the same errors, but
// with no decoder and no per-Read checks (there is nothing to decode, and
// the length is within the budget). The chunk is taken, and its capacity
// charged to the in-flight budget, once the first 512 bytes came (or the
// whole body, if shorter): a peer holds at most [EarnRatio] bytes per byte
// it sent, and before them the body holds nothing. A body read to its end hands the charge over with
// the chunks (their Release gives it back); on failure, or a panic in the
// source, ReadExact gives it back itself and returns no chunk. Usage counts
// the bytes read off the source. The caller bounds the time (a read
// deadline on the connection).
func ReadExact(e *Exact) (chunks chunk.List, u limits.Usage, err error) {
	probe := probePool.Get().(*[chunk.MinSize]byte) // on the stack it would escape through the source's Read
	defer probePool.Put(probe)
	first := probe[:min(e.Length, chunk.MinSize)]
	m, err := fill(e.Src, first, 0)
	if m == 0 {
		if err == io.EOF {
			return chunk.List{}, u, nil // a source that ended without a byte or an error, as Read takes it
		}
		return chunk.List{}, u, err
	}
	h := inflight.NewHold(e.Config.pool)
	h.SetPeers(peerSlots(e.Peers))
	ctx := e.Ctx
	if e.Wait == 0 {
		ctx = nil
	}
	u = limits.Usage{WireBytes: int64(m), DecodedBytes: int64(m)}
	if err := reserveFirst(&h, ctx, e.Wait, chunk.Cap(e.Length)); err != nil {
		if b := inflightError(err, "identity", false); b != nil {
			return chunk.List{}, u, b
		}
		return chunk.List{}, u, err
	}
	// h holds the charge until the read returned: a panic in the source's
	// Read gives it back (the chunk is dropped, not pooled, as a
	// decoder's are).
	defer h.Release()
	buf := chunks.Next(e.Length)
	copy(buf, first[:m])
	if err == nil {
		m, err = readExact(e.Src, buf, m)
	} // else the source ended (io.EOF) or failed within its first bytes
	u = limits.Usage{WireBytes: int64(m), DecodedBytes: int64(m)}
	if err != io.EOF {
		chunks.Release()
		return chunk.List{}, u, err
	}
	chunks.Truncate(m) // a source that ended sooner without an error, as Read takes it
	chunks.Charge(h.Split(h.Held()))
	return chunks, u, nil
}

// readExact fills buf from src, its first have bytes already read, and
// reads on to the end, which it reports as io.EOF; it returns the bytes in
// buf. A source that returns more than len(buf) bytes fails.
func readExact(src io.Reader, buf []byte, have int) (int, error) {
	n, err := fill(src, buf[have:], have)
	n += have
	if err != nil {
		return n, err // io.EOF included
	}
	// Full, and the source has not said that it ended: its next Read must.
	probe := probePool.Get().(*[chunk.MinSize]byte)
	defer probePool.Put(probe)
	m, err := fill(src, probe[:1], n)
	if m > 0 {
		return n, &limits.Error{Stage: limits.StageIntegrity, Observed: int64(n + m), Err: errLonger}
	}
	return n, err
}

// fill reads src until buf is full or an error, with the source errors of
// [Reader.Read]: io.EOF as it is, a connection cut short as a breach of
// integrity that observed the body's bytes read (before of them were read
// before buf), the rest bounded.
func fill(src io.Reader, buf []byte, before int) (int, error) {
	var n, empty int
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		if m < 0 || m > len(buf)-n {
			return n, errSourceCount
		}
		n += m
		switch {
		case err == io.EOF:
			return n, io.EOF
		case err != nil:
			if e := cutShort(err, int64(before+n)); e != nil {
				return n, e
			}
			return n, peertext.Bound(err)
		case m == 0:
			if empty++; empty >= maxEmptyReads {
				return n, io.ErrNoProgress
			}
		default:
			empty = 0
		}
	}
	return n, nil
}
