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
	"sync"

	"github.com/boundhttp/boundhttp/internal/inflight"
)

// Chunk sizes: the first is small so that small bodies stay cheap, later
// ones double up to MaxSize. One pool per power-of-two size class.
const (
	MinSize    = 512
	MaxSize    = 64 << 10
	numClasses = 8 // 512 B, 1 KiB, ... 64 KiB
)

var pools [numClasses]sync.Pool // of *[]byte: a chunk, its length its class's size

// boxes holds emptied *[]byte, for a chunk made when its pool is empty: a
// chunk travels in its box through the list and back to the pool, so
// neither taking nor releasing one allocates.
var boxes sync.Pool // of *[]byte

// firstCap is the capacity of a list's slice of chunks: a body of a few KiB
// takes four (512 B, 1 KiB, 2 KiB, and the rest), so most lists never grow.
const firstCap = 4

// lists holds the arrays of released lists' slices of chunks, emptied.
var lists sync.Pool // of *[firstCap]*[]byte

// A List is a body held in consecutive pooled chunks. The zero value is an
// empty list. It is a small value (one slice); a copy shares the chunks and
// the slice, which Release and Join pool too: once one copy is released, no
// copy may be used. It is not safe for concurrent use.
type List struct {
	c    []*[]byte     // the chunks, each in its box; only ever appended to by Next
	hold inflight.Hold // the in-flight charge of the chunks; see Charge
}

// Charge makes l hold h, the in-flight charge of its chunks, and give it
// back when the chunks are released or joined.
func (l *List) Charge(h inflight.Hold) { l.hold = h }

// Next takes a chunk of n bytes (0 < n <= MaxSize) from the pools, appends
// it to l and returns it for filling. Its capacity is the smallest size
// class that holds n.
func (l *List) Next(n int64) []byte {
	c := 0
	for int64(MinSize)<<c < n {
		c++
	}
	p, ok := pools[c].Get().(*[]byte)
	if !ok {
		if p, ok = boxes.Get().(*[]byte); !ok {
			p = new([]byte)
		}
		*p = make([]byte, MinSize<<c)
	}
	*p = (*p)[:n]
	if l.c == nil {
		l.c = newSlice()
	}
	l.c = append(l.c, p)
	return *p
}

// Truncate cuts the last chunk to its first m bytes.
func (l *List) Truncate(m int) {
	last := l.c[len(l.c)-1]
	*last = (*last)[:m]
}

// Len returns the number of chunks.
func (l *List) Len() int { return len(l.c) }

// Chunk returns chunk i. Its capacity is clipped to its length, so that
// appending to it cannot write into pooled memory.
func (l *List) Chunk(i int) []byte {
	c := *l.c[i]
	return c[:len(c):len(c)]
}

// Size returns the bytes in all chunks.
func (l *List) Size() int64 {
	var n int64
	for _, c := range l.c {
		n += int64(len(*c))
	}
	return n
}

// Join returns the bytes of l in one slice and releases l. A single chunk
// is handed over without copying (and so never returns to its pool), its
// capacity clipped to the body: the pooled memory past it may hold an
// earlier body's bytes.
func (l *List) Join() []byte {
	switch len(l.c) {
	case 0:
		l.hold.Release()
		return []byte{}
	case 1:
		p := l.c[0]
		out := *p
		*p = nil
		boxes.Put(p)
		l.c[0] = nil
		l.putSlice()
		l.hold.Release()
		return out[:len(out):len(out)] // what lies past the body may be an earlier body's
	}
	// bytes.Join allocates without zeroing memory it then overwrites:
	// for a body of megabytes, clearing it first costs as much as the copy.
	var onStack [numClasses][]byte // enough for most lists; a longer one allocates its own
	parts := onStack[:0]
	for _, p := range l.c {
		parts = append(parts, *p)
	}
	out := bytes.Join(parts, nil)
	l.Release()
	return out
}

// Release returns the chunks to their pools and empties l. The slices
// returned by Next and Chunk must not be used afterwards.
func (l *List) Release() {
	for _, p := range l.c {
		c := cap(*p)
		class := 0
		for MinSize<<class < c {
			class++
		}
		*p = (*p)[:c]
		pools[class].Put(p)
	}
	clear(l.c)
	l.putSlice()
	l.hold.Release()
}

// newSlice returns an empty slice of chunks, from the pool if it can.
func newSlice() []*[]byte {
	if a, ok := lists.Get().(*[firstCap]*[]byte); ok {
		return a[:0]
	}
	return make([]*[]byte, 0, firstCap)
}

// putSlice puts l's slice of chunks, whose elements are cleared, into the
// pool (if it did not grow) and leaves l empty.
func (l *List) putSlice() {
	if cap(l.c) == firstCap {
		lists.Put((*[firstCap]*[]byte)(l.c[:firstCap]))
	}
	l.c = nil
}
