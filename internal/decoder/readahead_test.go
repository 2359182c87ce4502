package decoder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp/limits"
)

// TestWholeBodiesThatReadAheadNeverGridlock: whole bodies read ahead holding
// bytes, then wait for their bound; a budget they share must never end with
// every byte held by bodies that wait. 600 bodies at once (gzip, deflate,
// zstd, identity; 8 to 16 KiB each, given in pieces of 1 to 4 KiB, all
// starting together) through a budget of 2 MiB whose bodies' bounds are
// about 450 KiB each: the bytes they read ahead (about 4 KiB each) alone
// would fill it, and every body must end, with its bytes, and the budget
// empty. Each waits up to a minute: a gridlock fails the test instead of
// hanging it. The schedule decides whether a broken rule gridlocks (a
// starting room as large as the budget did not, in 600 bodies: the first
// bodies reserve before the read-aheads fill it); the rule itself is pinned
// by TestWaiterBesideAFullStartingRoomFindsItsHalf.
func TestWholeBodiesThatReadAheadNeverGridlock(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(2 << 20)
	b := limits.Budget{MaxDecodedBytes: 256 << 10, MaxWindowBytes: 64 << 10}.WithDefaults()
	codings := []string{"gzip", "deflate", "zstd", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	type body struct {
		coding string
		data   []byte
		wire   []byte
		seed   uint64
	}
	bodies := make([]body, 600)
	for i := range bodies {
		data := make([]byte, 8<<10+rng.IntN(8<<10))
		rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)}).Read(data)
		c := codings[i%len(codings)]
		wire := data
		if c != "" {
			wire = encodeWindow(t, c, data, 64<<10)
		}
		bodies[i] = body{c, data, wire, rng.Uint64()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg, started sync.WaitGroup
	started.Add(len(bodies))
	errs := make(chan error, len(bodies))
	for i, bd := range bodies {
		wg.Go(func() {
			// Every body starts reading at once: the read-aheads race.
			src := &randomPieces{r: bytes.NewReader(bd.wire), rng: rand.New(rand.NewPCG(bd.seed, 0)), started: &started}
			d, err := NewReader(src, bd.coding, b, WithInFlight(f))
			if err != nil {
				errs <- err
				return
			}
			d.SetInFlightWait(ctx, -1)
			got, err := d.ReadAll()
			d.Close()
			if err != nil || !bytes.Equal(got, bd.data) {
				errs <- fmt.Errorf("body %d (%q, %d bytes): %d bytes, %v", i, bd.coding, len(bd.data), len(got), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d bodies failed", n, len(bodies))
	}
	if f.InUse() != 0 || f.Peak() > f.Cap() {
		t.Errorf("InUse() = %d, Peak() = %d after every body ended; want 0, at most %d", f.InUse(), f.Peak(), f.Cap())
	}
}

// randomPieces gives 1 to 4 KiB per Read, and lets other goroutines run
// first; its first Read waits for started, if any, once it has marked
// itself on it.
type randomPieces struct {
	r       io.Reader
	rng     *rand.Rand
	started *sync.WaitGroup
}

func (p *randomPieces) Read(b []byte) (int, error) {
	if p.started != nil {
		p.started.Done()
		p.started.Wait()
		p.started = nil
	}
	runtime.Gosched() // the bodies interleave, read by read
	return p.r.Read(b[:min(len(b), 1+p.rng.IntN(4<<10))])
}

// TestReadAheadServesTheSourceAsItCame: the bytes read ahead reach the
// decoders exactly as the source gave them, followed by what the source
// returned after them (its end, a cut, an error, or nothing yet: then the
// source is read on), whatever the body's length against the point where
// the read-ahead stops; the charge is given back. Rows: bodies of 0, 1, 511,
// 512, 513 bytes and around the read-ahead's end, ending cleanly, cut short
// (io.ErrUnexpectedEOF) and failing. Sabotage: returning the stored error
// before the bytes (next) fails every failing row with bytes; dropping it
// fails the cut rows with a false success.
func TestReadAheadServesTheSourceAsItCame(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(1 << 30)
	b := limits.Budget{MaxDecodedBytes: 1 << 20}.WithDefaults()
	d, _ := NewReader(bytes.NewReader(nil), "", b, WithInFlight(f))
	d.startBody(b.MaxDecodedBytes)
	at, ok := d.earnedAt()
	d.Close()
	if !ok || at < 4096 {
		t.Fatalf("earnedAt() = %d, %v; want a read-ahead of some KiB", at, ok)
	}
	data := text(int(at) + 4096)
	for _, n := range []int64{0, 1, 511, 512, 513, at - 1, at, at + 1, at + 4096} {
		for _, tail := range []struct {
			name string
			err  error
		}{{"end", io.EOF}, {"cut", io.ErrUnexpectedEOF}, {"failure", io.ErrClosedPipe}} {
			src := io.MultiReader(bytes.NewReader(data[:n]), &errAfter{tail.err})
			got, err := ReadAll(&randomPieces{r: src, rng: rand.New(rand.NewPCG(uint64(n), 1))}, "", b, WithInFlight(f))
			name := fmt.Sprintf("%d bytes, %s", n, tail.name)
			switch tail.err {
			case io.EOF:
				if err != nil || !bytes.Equal(got, data[:n]) {
					t.Errorf("%s: %d bytes, %v; want the body", name, len(got), err)
				}
			case io.ErrUnexpectedEOF:
				var e *limits.Error
				if !errors.As(err, &e) || e.Stage != limits.StageIntegrity || e.Observed != n {
					t.Errorf("%s: %v; want integrity, observed %d", name, err, n)
				}
			default:
				if !errors.Is(err, io.ErrClosedPipe) {
					t.Errorf("%s: %v; want the source's error", name, err)
				}
			}
			if f.InUse() != 0 {
				t.Errorf("%s: InUse() = %d after ReadAll, want 0", name, f.InUse())
			}
		}
	}
}

// errAfter returns err at every Read.
type errAfter struct{ err error }

func (e *errAfter) Read([]byte) (int, error) { return 0, e.err }

// encodeWindow encodes data with coding, a zstd frame with a window of at
// most window bytes.
func encodeWindow(t testing.TB, coding string, data []byte, window int) []byte {
	if coding != "zstd" {
		return encode(t, coding, data)
	}
	e, err := zstd.NewWriter(nil, zstd.WithWindowSize(window))
	if err != nil {
		t.Fatal(err)
	}
	return e.EncodeAll(data, nil)
}
