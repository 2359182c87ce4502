package decoder

import (
	"io"
	"math/bits"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/sat"
)

// EarnRatio is what a body read whole may hold of its in-flight budget per
// byte its peer sent, before the body has ended: it reserves its bound (its
// decoded bytes, their chunks' slack and its decoders' largest state) only
// once its peer has sent 1/EarnRatio of it. Until then it reads ahead, holding
// the bytes read (in chunks of at most twice their size) and nothing for
// decoding. A body that ends sooner reserves its bound then: its peer can no
// longer stall it.
const EarnRatio = 128

// readAhead holds the first bytes of a body read whole, read from the source
// before any is decoded, and what the source returned after them. The wire
// reader serves them first. Their chunks are charged to the budget's
// starting room (see inflight.Hold.Starting).
type readAhead struct {
	chunks chunk.List // charged with the starting Hold
	i, off int        // the next byte to serve: chunk i, offset off
	err    error      // what the source returned after the last byte read ahead; nil: read on
	on     bool       // bytes or err remain to be served
	held   int64      // the chunks' charge
}

// earnedAt returns how many bytes of the source d reads ahead before it
// reserves its bound (its pending body bound, its first chunk and the
// largest state its codings' decoders can be charged), at most MaxWireBytes; ok is false for
// a bound above half of what the body can hold, which reads nothing ahead:
// it could not wait for its bound while holding bytes (see
// inflight.Hold.Starting), and reserves it at its first byte instead.
func (d *Reader) earnedAt() (n int64, ok bool) {
	// The first chunk is reserved on top of the pending bound (see
	// chargeChunk).
	bound := max(d.fl.pending, 0)
	bound = sat.Add(bound, chunk.Cap(min(max(bound, 1), chunk.MaxSize)))
	for i := range d.layers {
		bound = sat.Add(bound, maxState(d.layers[i].name, d.b.MaxWindowBytes))
	}
	if bound > d.fl.hold.MostAfterStart() {
		return 0, false
	}
	n = bound/EarnRatio + 1
	if n > d.b.MaxWireBytes {
		// The wire limit comes first: the body can never earn its bound,
		// so it reads ahead to its end, or to the byte past the limit
		// (which fails it).
		n = d.b.MaxWireBytes + 1
	}
	return n, true
}

// maxState returns the most the decoder of coding name can be charged for
// its state and window under a window limit of window bytes.
func maxState(name string, window int64) int64 {
	switch name {
	case "gzip", "deflate":
		return FlateState
	case "zstd":
		return ZstdState + window
	case "br":
		return brotliCharge(max(uint(bits.Len64(uint64(max(window, standardBrotliWindow)-1))), 24))
	}
	return 0
}

// readAheadTo reads up to n bytes of the source before any is decoded, in
// chunks charged to the starting room: until n bytes came, the source
// ended or failed, stopped making progress, the budget's Timeout passed, or
// the starting room has no space for the next chunk. The first chunk (512
// bytes) is charged once bytes came into it: before them the body holds
// nothing. A body whose first chunk finds no space keeps it uncharged,
// reads nothing more ahead and reserves its bound as a body read as a
// stream does.
func (d *Reader) readAheadTo(n int64) {
	a := &d.fl.ahead
	h := d.fl.hold.Starting()
	if d.b.Timeout > 0 && d.start.IsZero() {
		d.start = time.Now()
	}
	var got int64
	// The chunks take their charge when the reading ends, or panics: the
	// Reader's Abandon then gives it back.
	defer func() {
		a.held = h.Held()
		a.chunks.Charge(h.Split(a.held))
		a.on = got > 0 || a.err != nil
		if !a.on {
			a.chunks.Release()
		}
	}()
	var deadline time.Time
	if d.b.Timeout > 0 {
		deadline = d.start.Add(d.b.Timeout)
	}
	size := int64(chunk.MinSize)
	for got < n && a.err == nil {
		s := min(size, n-got)
		if got > 0 && h.Grow(chunk.Cap(s)) != nil {
			break
		}
		buf := a.chunks.Next(s)
		m, err, more := readSome(d.wire.src, buf, deadline)
		a.chunks.Truncate(m)
		a.err = err
		if got == 0 && m > 0 && h.Grow(chunk.Cap(s)) != nil {
			more = false
		}
		got += int64(m)
		if !more {
			break
		}
		size = min(size*2, chunk.MaxSize)
	}
}

// readSome fills buf from src; more reports that it filled buf with no error
// and may read on. It stops early, with more false, once deadline (if not
// zero) has passed, so that a source that trickles does not hold a body
// past its Timeout; after maxEmptyReads reads in a row that return nothing
// and no error (io.ErrNoProgress, as the wire reader says); and on a count
// outside [0, len(p)] (errSourceCount).
func readSome(src io.Reader, buf []byte, deadline time.Time) (n int, err error, more bool) {
	empty := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		if m < 0 || m > len(buf)-n {
			return n, errSourceCount, false
		}
		n += m
		if err != nil {
			return n, err, false
		}
		if m == 0 {
			if empty++; empty >= maxEmptyReads {
				return n, io.ErrNoProgress, false
			}
		} else {
			empty = 0
		}
		if !deadline.IsZero() && n < len(buf) && time.Now().After(deadline) {
			return n, nil, false
		}
	}
	return n, nil, true
}

// next serves bytes read ahead into p. ok reports that it served something:
// bytes, or the error that followed them; after both it gives back the
// chunks and their charge, and the source is read again.
func (a *readAhead) next(p []byte) (n int, err error, ok bool) {
	if !a.on {
		return 0, nil, false
	}
	for a.i < a.chunks.Len() && n < len(p) {
		c := a.chunks.Chunk(a.i)
		m := copy(p[n:], c[a.off:])
		n += m
		if a.off += m; a.off == len(c) {
			a.i, a.off = a.i+1, 0
		}
	}
	if n > 0 {
		return n, nil, true
	}
	err = a.err
	a.drop()
	return 0, err, err != nil
}

// drop gives back the chunks read ahead and their charge.
func (a *readAhead) drop() {
	if a.on || a.chunks.Len() > 0 {
		a.chunks.Release()
	}
	*a = readAhead{}
}

// holds reports whether bytes read ahead are still charged.
func (a *readAhead) holds() bool { return a.on && a.held > 0 }
