package chunk

import (
	"bytes"
	"math"
	"testing"
)

// TestChunkCannotReachPooledMemory: appending to a chunk handed out by
// Chunk never writes into pooled memory that a later body would use.
func TestChunkCannotReachPooledMemory(t *testing.T) {
	var l List
	buf := l.Next(600)
	for i := range buf {
		buf[i] = 'x'
	}
	l.Truncate(600)
	c := l.Chunk(0)
	if cap(c) != len(c) {
		t.Fatalf("cap(Chunk(0)) = %d, want %d (clipped)", cap(c), len(c))
	}
	grown := append(c, bytes.Repeat([]byte{'!'}, 100)...)
	l.Release()
	for range 50 {
		var m List
		b := m.Next(1000)
		if bytes.Contains(b, []byte("!!!")) {
			t.Errorf("a later chunk holds bytes appended to an earlier Chunk")
		}
		m.Release()
	}
	_ = grown
}

// TestReleaseOnlyPoolsOwnChunks: Release empties the list; a second
// Release pools nothing twice.
func TestReleaseOnlyPoolsOwnChunks(t *testing.T) {
	var l List
	l.Next(512)
	l.Next(64 << 10)
	if l.Len() != 2 || l.Size() != 512+64<<10 {
		t.Fatalf("Len, Size = %d, %d", l.Len(), l.Size())
	}
	l.Release()
	if l.Len() != 0 {
		t.Fatalf("Len after Release = %d, want 0", l.Len())
	}
	l.Release() // nothing left to pool
}

// TestPooledListAllocatesNothing: in steady state, taking chunks and
// putting them back allocates nothing, the list's own slice included; nor
// does joining them (beyond the joined slice).
func TestPooledListAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops objects at random under the race detector")
	}
	body := func() {
		var l List
		for _, n := range []int64{512, 1024, 2048, 512} {
			l.Next(n)
		}
		l.Release()
	}
	body()
	if allocs := testing.AllocsPerRun(100, body); allocs != 0 {
		t.Errorf("a 4-chunk list allocated %v times per body in steady state, want 0", allocs)
	}
	joined := func() {
		var l List
		for _, n := range []int64{512, 1024, 2048, 512} {
			l.Next(n)
		}
		l.Join()
		var one List
		one.Next(700)
		one.Join()
	}
	joined()
	if allocs := testing.AllocsPerRun(100, joined); allocs != 2 {
		t.Errorf("joining a 4-chunk and a 1-chunk list allocated %v times in steady state, want 2 (the joined slice, the chunk handed over)", allocs)
	}
}

// TestJoinIsTheBodyExactly: Join returns every chunk's bytes in order in a
// slice of exactly that size (not zeroed first, so every byte must be
// written), and leaves the list empty.
func TestJoinIsTheBodyExactly(t *testing.T) {
	for _, sizes := range [][]int64{{}, {700}, {512, 1024, 2048, 512}, {64 << 10, 64 << 10, 3}} {
		var l List
		var want []byte
		for i, n := range sizes {
			c := l.Next(n)
			for j := range c {
				c[j] = byte('a' + (i+j)%26)
			}
			want = append(want, c...)
		}
		got := l.Join()
		if !bytes.Equal(got, want) {
			t.Errorf("sizes %v: Join returned %d bytes, not the %d bytes of the chunks in order", sizes, len(got), len(want))
		}
		if len(sizes) > 1 && cap(got) != len(got) {
			t.Errorf("sizes %v: cap(Join()) = %d, want %d", sizes, cap(got), len(got))
		}
		if l.Len() != 0 {
			t.Errorf("sizes %v: Len after Join = %d, want 0", sizes, l.Len())
		}
	}
}

// TestJoinedChunkHidesEarlierBodies (trap: a pooled chunk handed over with
// its capacity): the slice Join hands over cannot be resliced into the
// pooled memory past the body, which may hold an earlier body's bytes.
func TestJoinedChunkHidesEarlierBodies(t *testing.T) {
	var l List
	copy(l.Next(500), bytes.Repeat([]byte("secret"), 100))
	l.Release()
	var m List
	copy(m.Next(10), "0123456789")
	out := m.Join()
	if cap(out) != len(out) {
		t.Fatalf("Join handed over %d bytes with capacity %d: %q lies past them", len(out), cap(out), out[len(out):cap(out)])
	}
}

// TestOneChunkListTakesNoSlice (trap: pool work a small body does not
// need): a body held in one chunk, as every exact body and most small ones
// are, keeps it beside the list's slice of further chunks, which it never
// takes from its pool; a second chunk takes the slice.
func TestOneChunkListTakesNoSlice(t *testing.T) {
	var l List
	l.Next(700)
	if l.rest != nil || l.Len() != 1 {
		t.Fatalf("one chunk: Len %d, slice of further chunks %v; want 1 and none", l.Len(), l.rest)
	}
	l.Next(1024)
	if len(l.rest) != 1 || l.Len() != 2 || l.Size() != 1724 {
		t.Errorf("two chunks: Len %d, Size %d, further %d; want 2, 1724, 1", l.Len(), l.Size(), len(l.rest))
	}
	l.Release()
	if l.Len() != 0 || l.rest != nil || l.first != nil {
		t.Errorf("released list: Len %d; want empty", l.Len())
	}
}

// A chunk of n bytes comes from the smallest class that holds it, and a
// released chunk goes back to the class it came from: a class one too
// small overruns, one too large wastes the pool's memory.
func TestSizeClassIsTheSmallestThatHolds(t *testing.T) {
	for n := int64(1); n <= MaxSize; n++ {
		c := classOf(n)
		if c < 0 || c >= numClasses || MinSize<<c < n || (c > 0 && MinSize<<(c-1) >= n) {
			t.Fatalf("classOf(%d) = %d: its size %d", n, c, MinSize<<c)
		}
		var l List
		took := int64(cap(l.Next(n)))
		l.Release()
		if got := Cap(n); got != MinSize<<c || took != got {
			t.Fatalf("Cap(%d) = %d, want %d, the capacity Next takes (%d)", n, got, MinSize<<c, took)
		}
	}
	for _, n := range []int64{0, -1, math.MinInt64} { // as the search it replaced: the first class
		if c := classOf(n); c != 0 {
			t.Fatalf("classOf(%d) = %d, want 0", n, c)
		}
	}
	for c := range numClasses {
		if got := classOf(MinSize << c); got != c {
			t.Fatalf("a chunk of class %d (%d bytes) is put back into class %d", c, MinSize<<c, got)
		}
	}
}
