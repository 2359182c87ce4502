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

var pools [numClasses]sync.Pool // of *[]byte

// boxes holds the *[]byte that carry chunks through the pools, emptied, so
// that putting a chunk back allocates nothing either.
var boxes sync.Pool // of *[]byte

// firstCap is the capacity of a list's slice of chunks: a body of a few KiB
// takes four (512 B, 1 KiB, 2 KiB, and the rest), so most lists never grow.
const firstCap = 4

// lists holds the emptied slices of released lists, and listBoxes the
// *[][]byte that carry them, emptied: a list's own slice is pooled too.
var lists, listBoxes sync.Pool // of *[][]byte

// A List is a body held in consecutive pooled chunks. The zero value is an
// empty list. It is a small value (one slice); a copy shares the chunks and
// the slice, which Release and Join pool too: once one copy is released, no
// copy may be used. It is not safe for concurrent use.
type List struct {
	c    [][]byte      // only ever appended to by Next
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
	var buf []byte
	if p, ok := pools[c].Get().(*[]byte); ok {
		buf = (*p)[:n]
		*p = nil
		boxes.Put(p)
	} else {
		buf = make([]byte, n, MinSize<<c)
	}
	if l.c == nil {
		l.c = newSlice()
	}
	l.c = append(l.c, buf)
	return buf
}

// Truncate cuts the last chunk to its first m bytes.
func (l *List) Truncate(m int) {
	last := &l.c[len(l.c)-1]
	*last = (*last)[:m]
}

// Len returns the number of chunks.
func (l *List) Len() int { return len(l.c) }

// Chunk returns chunk i. Its capacity is clipped to its length, so that
// appending to it cannot write into pooled memory.
func (l *List) Chunk(i int) []byte { return l.c[i][:len(l.c[i]):len(l.c[i])] }

// Size returns the bytes in all chunks.
func (l *List) Size() int64 {
	var n int64
	for _, c := range l.c {
		n += int64(len(c))
	}
	return n
}

// Join returns the bytes of l in one slice and releases l. A single chunk
// is handed over without copying (and so never returns to its pool).
func (l *List) Join() []byte {
	switch len(l.c) {
	case 0:
		l.hold.Release()
		return []byte{}
	case 1:
		out := l.c[0]
		l.c[0] = nil
		l.putSlice()
		l.hold.Release()
		return out
	}
	// bytes.Join allocates without zeroing memory it then overwrites:
	// for a body of megabytes, clearing it first costs as much as the copy.
	out := bytes.Join(l.c, nil)
	l.Release()
	return out
}

// Release returns the chunks to their pools and empties l. The slices
// returned by Next and Chunk must not be used afterwards.
func (l *List) Release() {
	for _, ch := range l.c {
		c := cap(ch)
		class := 0
		for MinSize<<class < c {
			class++
		}
		p, ok := boxes.Get().(*[]byte)
		if !ok {
			p = new([]byte)
		}
		*p = ch[:0]
		pools[class].Put(p)
	}
	clear(l.c)
	l.putSlice()
	l.hold.Release()
}

// newSlice returns an empty slice of chunks, from the pool if it can.
func newSlice() [][]byte {
	p, ok := lists.Get().(*[][]byte)
	if !ok {
		return make([][]byte, 0, firstCap)
	}
	c := *p
	*p = nil
	listBoxes.Put(p)
	return c
}

// putSlice puts l's slice of chunks, whose elements are cleared, into the
// pool and leaves l empty.
func (l *List) putSlice() {
	if l.c == nil {
		return
	}
	p, ok := listBoxes.Get().(*[][]byte)
	if !ok {
		p = new([][]byte)
	}
	*p = l.c[:0]
	lists.Put(p)
	l.c = nil
}
