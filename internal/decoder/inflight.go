package decoder

import (
	"context"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// Decoder state charged to an in-flight budget, in bytes, besides any
// window (see decoding.WithInFlight for what is charged when): measured with runtime.MemStats on Go 1.26 (see
// TestDecoderStateCharges), rounded up.
const (
	// FlateState is a gzip or deflate decoder: the 32 KiB window, the
	// Huffman tables and the 4 KiB input buffer.
	FlateState = 64 << 10
	// ZstdState is a zstd decoder apart from its window: block and literal
	// buffers and tables (about 480 KiB measured for 1 and 8 MiB windows).
	ZstdState = 640 << 10
	// BrotliState is a brotli decoder apart from its ring buffer: the
	// largest Huffman tree groups a meta-block header can ask for (256
	// literal, command and distance trees: 2.7 MiB, 3.3 MiB with large
	// windows' distance alphabet), the reader and its buffers.
	BrotliState = 3<<20 + 512<<10
)

// SetInFlightWait lets the body's first reservation (and a whole body's
// reservation of its bound after it read ahead) wait for room until ctx
// is done or max has elapsed (max < 0: until ctx is done; max == 0 or ctx
// nil: no wait, the default). Call it before the first Read. It has no
// effect on a body that charges no in-flight budget. A wait cut short is
// reported as [limits.StageInFlight] wrapping the context's error.
func (d *Reader) SetInFlightWait(ctx context.Context, max time.Duration) {
	d.fl.ctx, d.fl.max = ctx, max
	if max == 0 {
		d.fl.ctx = nil
	}
}

// SetPeers names the peers the body's charges count against (see
// inflight.Peers): on the server the client's connection and address, on
// the client the host; empty keys name none. Call it before the first
// Read.
func (d *Reader) SetPeers(keys [2]string) {
	d.fl.hold.SetPeers(peerSlots(keys))
}

// peerSlots returns the slots of the peers named by keys (two keys that
// share a slot count once: see inflight.Hold.SetPeers).
func peerSlots(keys [2]string) inflight.Peers {
	var p inflight.Peers
	for i, k := range keys {
		if k != "" {
			p[i] = inflight.PeerOf(k)
		}
	}
	return p
}

// inflightState is what a Reader holds of its InFlight budget.
type inflightState struct {
	hold     inflight.Hold
	ctx      context.Context // nil: the first reservation does not wait
	max      time.Duration   // < 0: wait until ctx is done
	decoders int64           // held for decoder state
	chunks   int64           // held for buffered chunks
	prepaid  int64           // reserved for chunks and not yet used
	pending  int64           // body bound to add to the first reservation
	ahead    readAhead       // bytes read ahead before the first reservation
}

// zstdCharge is what one zstd layer has been charged: each layer runs its
// own decoder, with its own state and window.
type zstdCharge struct {
	window int64 // the largest window of the layer's frames so far
	on     bool  // ZstdState was charged
}

// chargeDecoder charges n bytes of decoder state for coding enc.
func (d *Reader) chargeDecoder(n int64, enc string, declared bool) error {
	if d.fl.hold.Pool() == nil {
		return nil
	}
	if err := d.reserve(n, enc, declared); err != nil {
		return err
	}
	d.fl.decoders += n
	return nil
}

// chargeChunk charges a chunk of n bytes of capacity about to be buffered.
func (d *Reader) chargeChunk(n int64) error {
	if d.fl.hold.Pool() == nil {
		return nil
	}
	if d.fl.prepaid >= n {
		d.fl.prepaid -= n
	} else {
		// The first reservation adds the body's bound to prepaid.
		old := d.fl.prepaid
		if err := d.reserve(n-old, d.top.name, false); err != nil {
			return err
		}
		d.fl.prepaid -= old
	}
	d.fl.chunks += n
	return nil
}

// reserve takes n bytes: the first reservation of the body, together with
// its pending body bound, may wait; later ones fail at once.
func (d *Reader) reserve(n int64, enc string, declared bool) error {
	h := &d.fl.hold
	var err error
	if h.Held() == 0 {
		// The body bound rides along only as far as it fits: n + pending
		// never exceeds the capacity (nor overflows) unless n alone does.
		pending := max(d.fl.pending, 0)
		if c := d.most(); n <= c {
			pending = min(pending, c-n)
		} else {
			pending = 0
		}
		err = d.waitFirst(n + pending)
		if err == nil {
			d.fl.prepaid += pending
			d.fl.pending = 0
			return nil
		}
	} else if err = h.Grow(n); err == nil {
		return nil
	}
	if e := inflightError(err, enc, declared); e != nil {
		d.fail(e)
	}
	return d.fault
}

// inflightError returns the breach of a reservation that failed with err
// (an *inflight.Busy), or nil.
func inflightError(err error, enc string, declared bool) *limits.Error {
	b, ok := err.(*inflight.Busy)
	if !ok {
		return nil
	}
	return &limits.Error{Stage: limits.StageInFlight, Limit: b.Cap, Observed: b.Need,
		Encoding: enc, Declared: declared && b.Need > b.Cap, Err: b.Err}
}

// waitFirst makes the body's first reservation, waiting as SetInFlightWait
// allows; a body that holds bytes read ahead waits for at most
// inflight.Hold.MostAfterStart, beyond it it does not wait.
func (d *Reader) waitFirst(n int64) error {
	if n > d.most() {
		return d.fl.hold.Grow(n)
	}
	return reserveFirst(&d.fl.hold, d.fl.ctx, d.fl.max, n)
}

// most returns the most the body's first reservation may wait for: what its
// Hold can ever hold, or MostAfterStart while it holds bytes read ahead.
func (d *Reader) most() int64 {
	if d.fl.ahead.holds() {
		return d.fl.hold.MostAfterStart()
	}
	return d.fl.hold.Most()
}

// reserveFirst makes a body's first reservation of n bytes in h, waiting
// until ctx is done or max has elapsed (max < 0: until ctx is done; ctx
// nil: no wait). The timer exists only when there is no room at once.
func reserveFirst(h *inflight.Hold, ctx context.Context, max time.Duration, n int64) error {
	if ctx == nil {
		return h.Grow(n)
	}
	if err := h.Grow(n); err == nil {
		return nil
	}
	if max > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, max)
		defer cancel()
	}
	return h.Wait(ctx, n)
}

// startBody sets the body bound a whole-body read reserves first.
func (d *Reader) startBody(remaining int64) {
	if d.fl.hold.Pool() == nil || d.fl.hold.Held() != 0 {
		return
	}
	bound := remaining
	if d.sizeHint > 0 {
		bound = min(d.sizeHint, remaining)
	}
	// Chunk capacities exceed the bytes by less than one chunk; a bound
	// near MaxInt64 saturates rather than wrapping negative.
	d.fl.pending = bound + min(bound, chunk.MaxSize, 1<<63-1-bound)
}

// handOver gives back what the body's reservation did not use and moves
// the charge of the chunks to them: it ends when they are released.
func (d *Reader) handOver(l *chunk.List) {
	d.fl.hold.Shrink(d.fl.prepaid)
	d.fl.prepaid, d.fl.pending = 0, 0
	if d.fl.chunks > 0 {
		l.Charge(d.fl.hold.Split(d.fl.chunks))
		d.fl.chunks = 0
	}
}

// dropChunks gives back the charge of chunks that were released, and the
// bytes read ahead.
func (d *Reader) dropChunks() {
	d.fl.ahead.drop()
	d.fl.hold.Shrink(d.fl.chunks + d.fl.prepaid)
	d.fl.chunks, d.fl.prepaid, d.fl.pending = 0, 0, 0
}

// dropDecoders gives back the charge of the released decoders.
func (d *Reader) dropDecoders() {
	d.fl.hold.Shrink(d.fl.decoders)
	d.fl.decoders = 0
}

// chargeZstdWindow charges a zstd frame's declared window to the layer
// whose charge is z (the largest window of the layer's frames so far, and
// its decoder's state once).
func (d *Reader) chargeZstdWindow(z *zstdCharge, window int64) error {
	if d.fl.hold.Pool() == nil || (z.on && window <= z.window) {
		return nil
	}
	extra := max(window-z.window, 0)
	if !z.on {
		extra += ZstdState
	}
	if err := d.chargeDecoder(extra, "zstd", true); err != nil {
		return err
	}
	z.on, z.window = true, max(z.window, window)
	return nil
}

// Done returns the decoders to their pools and gives back everything d
// holds of its in-flight budget, as Close does, but does not close the
// source; a later Close still does. Read after Done fails. Done is
// idempotent.
func (d *Reader) Done() {
	d.releaseDecoders()
	d.dropChunks()
}

// Recycle ends d's life, as Done does, and drops its references to the
// body (source, decoders) so that d can wait in a pool for [Reader.Reset]
// without keeping them alive.
func (d *Reader) Recycle() {
	d.Done()
	layers := d.layers
	clear(layers)
	*d = Reader{layers: layers[:0], err: ErrClosed}
}

// Abandon ends the life of a Reader whose Read panicked: its decoders'
// state cannot be trusted, so they are dropped instead of pooled; the
// in-flight charge is given back. d is not to be reused.
func (d *Reader) Abandon() {
	for i := range d.layers {
		d.layers[i].dec = nil
	}
	d.release = true
	d.fl.hold.Release()
	d.fl.ahead.drop()
	d.fl = inflightState{}
	d.err = ErrClosed
}
