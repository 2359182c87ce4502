package inflight

import (
	"sync/atomic"
	"time"
)

// releaseRate counts the bytes a Pool gave back, by second of the
// monotonic clock: the last full second's count is how fast room frees.
// Its zero value is ready. Safe for concurrent use; add is two atomic
// operations in the common case.
type releaseRate struct {
	sec  atomic.Int64 // the second the current count is of
	cur  atomic.Int64 // bytes given back in sec
	last atomic.Int64 // bytes given back in sec-1 (0 if none, or older)
}

// epoch is the origin of the seconds releaseRate counts.
var epoch = time.Now()

func nowSec() int64 { return int64(time.Since(epoch) / time.Second) }

// add counts n bytes given back now.
func (r *releaseRate) add(n int64) {
	now := nowSec()
	if s := r.sec.Load(); s != now && r.sec.CompareAndSwap(s, now) {
		old := r.cur.Swap(0)
		if s == now-1 {
			r.last.Store(old)
		} else {
			r.last.Store(0)
		}
	}
	r.cur.Add(n)
}

// perSecond returns the bytes given back in the last full second, or in
// the second under way if more (a burst that began less than a second
// ago): zero when none were, or when the last count is older.
func (r *releaseRate) perSecond() int64 {
	now := nowSec()
	switch r.sec.Load() {
	case now:
		return max(r.last.Load(), r.cur.Load())
	case now - 1:
		return r.cur.Load()
	}
	return 0
}

// MaxRetryAfter bounds [RetryAfter]: a minute, the default body
// timeout, after which every stalled body has given its room back.
const MaxRetryAfter = time.Minute

// RetryAfter returns when need bytes are expected to be free for a body
// that was refused them, from the budget's state: the time the last
// second's rate of release takes to free what is missing (need less the
// free room; for a peer refused by its share, with room to spare, what
// leaves a share free besides), at least one second; MaxRetryAfter when
// nothing was given back in the last second (the holders are stalled, and
// their deadlines free the room). A function, not a method: see Init.
func RetryAfter(p *Pool, need int64) time.Duration {
	free := p.cap - p.used.Load()
	missing := need - free
	if missing <= 0 {
		missing = need + p.share - free // refused by the share rule
	}
	if missing <= 0 {
		return time.Second
	}
	rate := p.rate.perSecond()
	if rate <= 0 {
		return MaxRetryAfter
	}
	secs := (missing + rate - 1) / rate
	return time.Duration(min(max(secs, 1), int64(MaxRetryAfter/time.Second))) * time.Second
}
