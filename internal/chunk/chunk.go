// Package chunk holds the pooled chunks that whole bodies are read into
// (by the decoder's ReadAllChunks). It is internal: pool plumbing is no part
// of the public API.
//
// Only this package puts slices into a [List], and each comes from the
// pools, so [List.Release] can never pool a slice of another origin: a
// caller's buffer cannot alias a later body.
package chunk

import (
	"bytes"
	"math/bits"
	"sync"

	"github.com/boundhttp/boundhttp/internal/inflight"
)

// Chunk sizes: the first is small so that small bodies stay cheap, later
// ones double up to MaxSize. One pool per power-of-two size class.
const (
	minBits    = 9 // log2(MinSize)
	MinSize    = 1 << minBits
	MaxSize    = 64 << 10
	numClasses = 8 // 512 B, 1 KiB, ... 64 KiB
)

var pools [numClasses]sync.Pool // of *[]byte: a chunk, its length its class's size

// boxes holds emptied *[]byte, for a chunk made when its pool is empty: a
// chunk travels in its box through the list and back to the pool, so
// neither taking nor releasing one allocates.
var boxes sync.Pool // of *[]byte

// firstCap is the capacity of a list's slice of the chunks after its
// first: a body of a few KiB takes four (512 B, 1 KiB, 2 KiB, and the
// rest), so most lists never grow.
const firstCap = 4

// lists holds the arrays of released lists' slices of chunks, emptied.
var lists sync.Pool // of *[firstCap]*[]byte

// A List is a body held in consecutive pooled chunks. The zero value is an
// empty list. It is a small value (the first chunk's box and a slice of
// the rest); a copy shares the chunks and the slice, which Release and
// Join pool too: once one copy is released, no copy may be used. It is not
// safe for concurrent use.
//
// The first chunk is held apart from the rest: a body of one chunk (every
// exact body, most small ones) takes no slice, so reading it takes one
// pool operation and releasing it one more.
type List struct {
	first *[]byte       // the first chunk, in its box, or nil when the list is empty
	rest  []*[]byte     // the chunks after it, each in its box; only ever appended to by Next
	hold  inflight.Hold // the in-flight charge of the chunks; see Charge
}

// Charge makes l hold h, the in-flight charge of its chunks, and give it
// back when the chunks are released or joined.
func (l *List) Charge(h inflight.Hold) { l.hold = h }

// Next takes a chunk of n bytes (0 < n <= MaxSize) from the pools, appends
// it to l and returns it for filling. Its capacity is the smallest size
// class that holds n.
func (l *List) Next(n int64) []byte {
	c := classOf(n)
	p, ok := pools[c].Get().(*[]byte)
	if !ok {
		if p, ok = boxes.Get().(*[]byte); !ok {
			p = new([]byte)
		}
		*p = make([]byte, MinSize<<c)
	}
	*p = (*p)[:n]
	switch {
	case l.first == nil:
		l.first = p
	case l.rest == nil:
		l.rest = append(newSlice(), p)
	default:
		l.rest = append(l.rest, p)
	}
	return *p
}

// Cap returns the capacity of the chunk Next(n) takes (0 < n <= MaxSize):
// what a chunk of n bytes is charged.
func Cap(n int64) int64 { return MinSize << classOf(n) }

// classOf returns the smallest size class that holds n (n <= MaxSize; the
// first for n <= 0).
func classOf(n int64) int {
	return max(bits.Len64(uint64(max(n, 1)-1)), minBits) - minBits
}

// Truncate cuts the last chunk to its first m bytes.
func (l *List) Truncate(m int) {
	last := l.box(l.Len() - 1)
	*last = (*last)[:m]
}

// Len returns the number of chunks.
func (l *List) Len() int {
	if l.first == nil {
		return 0
	}
	return 1 + len(l.rest)
}

// box returns chunk i in its box.
func (l *List) box(i int) *[]byte {
	if i == 0 {
		return l.first
	}
	return l.rest[i-1]
}

// Chunk returns chunk i. Its capacity is clipped to its length, so that
// appending to it cannot write into pooled memory.
func (l *List) Chunk(i int) []byte {
	c := *l.box(i)
	return c[:len(c):len(c)]
}

// Size returns the bytes in all chunks.
func (l *List) Size() int64 {
	if l.first == nil {
		return 0
	}
	n := int64(len(*l.first))
	for _, c := range l.rest {
		n += int64(len(*c))
	}
	return n
}

// Join returns the bytes of l in one slice and releases l. A single chunk
// is handed over without copying (and so never returns to its pool), its
// capacity clipped to the body: the pooled memory past it may hold an
// earlier body's bytes.
func (l *List) Join() []byte {
	switch l.Len() {
	case 0:
		l.hold.Release()
		return []byte{}
	case 1:
		p := l.first
		out := *p
		*p = nil
		boxes.Put(p)
		l.first = nil
		l.hold.Release()
		return out[:len(out):len(out)] // what lies past the body may be an earlier body's
	}
	// bytes.Join allocates without zeroing memory it then overwrites:
	// for a body of megabytes, clearing it first costs as much as the copy.
	var onStack [numClasses][]byte // enough for most lists; a longer one allocates its own
	parts := append(onStack[:0], *l.first)
	for _, p := range l.rest {
		parts = append(parts, *p)
	}
	out := bytes.Join(parts, nil)
	l.Release()
	return out
}

// Release returns the chunks to their pools and empties l. The slices
// returned by Next and Chunk must not be used afterwards.
func (l *List) Release() {
	if l.first != nil {
		put(l.first)
		l.first = nil
	}
	if l.rest != nil {
		for _, p := range l.rest {
			put(p)
		}
		clear(l.rest)
		l.putSlice()
	}
	l.hold.Release()
}

// put returns the chunk in p to the pool of its size class.
func put(p *[]byte) {
	c := cap(*p)
	*p = (*p)[:c]
	pools[classOf(int64(c))].Put(p)
}

// newSlice returns an empty slice of chunks, from the pool if it can.
func newSlice() []*[]byte {
	if a, ok := lists.Get().(*[firstCap]*[]byte); ok {
		return a[:0]
	}
	return make([]*[]byte, 0, firstCap)
}

// putSlice puts l's slice of the chunks after the first, whose elements
// are cleared, into the pool (if it did not grow) and leaves it nil.
func (l *List) putSlice() {
	if cap(l.rest) == firstCap {
		lists.Put((*[firstCap]*[]byte)(l.rest[:firstCap]))
	}
	l.rest = nil
}
