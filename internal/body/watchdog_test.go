package body

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// connWriter stands for net/http's writer over one connection: a read
// deadline set to the past ends the blocked read of its body with
// os.ErrDeadlineExceeded, as the connection's would. It records every
// deadline set.
type connWriter struct {
	http.ResponseWriter
	mu   sync.Mutex
	set  []time.Time
	cut  chan struct{} // closed by a deadline in the past
	once sync.Once
}

func newConnWriter() *connWriter {
	return &connWriter{ResponseWriter: httptest.NewRecorder(), cut: make(chan struct{})}
}

func (w *connWriter) SetReadDeadline(t time.Time) error {
	w.mu.Lock()
	w.set = append(w.set, t)
	w.mu.Unlock()
	if !t.IsZero() && !t.After(time.Now()) {
		w.once.Do(func() { close(w.cut) })
	}
	return nil
}

func (w *connWriter) calls() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.set...)
}

// stalled is a connection's body that sends nothing until its read
// deadline passes (or, should no deadline ever come, until a test's
// patience ends: then it reports that instead).
type stalled struct{ cut <-chan struct{} }

func (s stalled) Read([]byte) (int, error) {
	select {
	case <-s.cut:
		return 0, os.ErrDeadlineExceeded
	case <-time.After(10 * time.Second):
		return 0, errNeverCut
	}
}

var errNeverCut = errors.New("no read deadline ended the stalled read")

// openWatched opens a whole server body of src watched with timeout from
// now, through w.
func openWatched(t *testing.T, src io.Reader, w http.ResponseWriter, timeout time.Duration) *Body {
	t.Helper()
	b := new(Body)
	budget := limits.Budget{Timeout: timeout}.WithDefaults()
	if err := b.Open(config(t, Server, nil), &Source{Body: src, Mode: Whole, Budget: budget, Ctx: context.Background(),
		RC: http.NewResponseController(w), ArmedAt: time.Now(), Watched: true}); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWatchdogEndsStalledReadAtDeadline (trap: a deadline no one sets): a
// whole body's read that is still blocked at Budget.Timeout is ended by
// the watchdog, which sets the connection's read deadline to the past,
// and the body is answered as a timeout; the past deadline stays, so that
// nothing more is waited for from that client.
func TestWatchdogEndsStalledReadAtDeadline(t *testing.T) {
	w := newConnWriter()
	b := openWatched(t, stalled{w.cut}, w, 50*time.Millisecond)
	defer b.Finish()
	if err := b.ReadAll(); err == nil {
		t.Fatal("ReadAll of a stalled body: nil error")
	}
	if e := b.Breach(); e == nil || e.Stage != limits.StageTimeout || !errors.Is(e, os.ErrDeadlineExceeded) {
		t.Fatalf("breach: %v, want stage timeout from the read deadline", e)
	}
	got := w.calls()
	if len(got) != 1 || got[0].After(time.Now()) {
		t.Errorf("deadlines set: %v, want one in the past and no clear", got)
	}
}

// TestWatchdogEarlierDeadlineAfterLaterOnes (trap: a timer armed for the
// first deadline it was told of): per-route budgets register a body with
// a short Timeout after bodies with long ones; its stalled read must still
// end at its own deadline, not at theirs.
func TestWatchdogEarlierDeadlineAfterLaterOnes(t *testing.T) {
	for range 3 {
		later := openWatched(t, newSource([]byte(`{"a":1}`), false), newConnWriter(), time.Hour)
		defer later.Finish()
	}
	w := newConnWriter()
	b := openWatched(t, stalled{w.cut}, w, 50*time.Millisecond)
	defer b.Finish()
	b.ReadAll()
	if e := b.Breach(); e == nil || e.Stage != limits.StageTimeout || !errors.Is(e, os.ErrDeadlineExceeded) {
		t.Fatalf("breach of a 50 ms body registered after 1 h ones: %v, want stage timeout from the read deadline", e)
	}
}

// TestWatchdogFullLaneStillEndsStalledRead (trap: a fast path that only
// works while it has room): with every slot of the lane held by a body
// still being read, the next body goes to the heap, and its stalled read
// still ends at its deadline.
func TestWatchdogFullLaneStillEndsStalledRead(t *testing.T) {
	before, _ := watch.watching()
	var waiting []*Body
	for range laneSlots {
		b := openWatched(t, newSource([]byte(`{"a":1}`), false), newConnWriter(), time.Hour)
		waiting = append(waiting, b)
	}
	defer func() {
		for _, b := range waiting {
			b.Finish()
		}
	}()
	w := newConnWriter()
	b := openWatched(t, stalled{w.cut}, w, 50*time.Millisecond)
	defer b.Finish()
	if b.watch.slot != 0 || !b.watch.on {
		t.Fatalf("a body opened beside %d waiting ones: slot %d, in the heap %v; want the heap", laneSlots, b.watch.slot, b.watch.on)
	}
	if n, _ := watch.watching(); n-before != laneSlots+1 {
		t.Errorf("watchdog holds %d more bodies, want %d", n-before, laneSlots+1)
	}
	b.ReadAll()
	if e := b.Breach(); e == nil || e.Stage != limits.StageTimeout || !errors.Is(e, os.ErrDeadlineExceeded) {
		t.Fatalf("breach of a stalled body beside a full lane: %v, want stage timeout from the read deadline", e)
	}
}

// TestWatchdogEndOrInterruptNeverBoth (trap: a body and the watchdog both
// taking it out of the lane): a read that ends just as its deadline passes
// is either taken out by its own end, and then no deadline ever reaches its
// connection, or by the watchdog, and then it is reported interrupted;
// never neither, never both.
func TestWatchdogEndOrInterruptNeverBoth(t *testing.T) {
	const workers, bodies = 4, 300
	stop := make(chan struct{})
	fired := make(chan struct{})
	go func() {
		defer close(fired)
		for {
			select {
			case <-stop:
				return
			default:
				watch.fire()
			}
		}
	}()
	var wg sync.WaitGroup
	var ends, interrupts atomic.Int64
	for range workers {
		wg.Go(func() {
			for range bodies {
				w := newConnWriter()
				b := openWatched(t, strings.NewReader("x"), w, time.Nanosecond)
				interrupted := b.unwatch()
				b.Finish() // after it no interrupt touches the connection
				if got := len(w.calls()); interrupted != (got == 1) || got > 1 {
					t.Errorf("unwatch reported interrupted %v, and %d deadlines were set", interrupted, got)
					return
				}
				if interrupted {
					interrupts.Add(1)
				} else {
					ends.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-fired
	t.Logf("%d reads ended first, %d were interrupted", ends.Load(), interrupts.Load())
}

// TestWatchdogExpiryTakesOnlyTheBodyItRead (trap: a slot emptied by a
// plain store): between the watchdog's read of a slot and its taking the
// body out, that body's read may end and a new body take the same slot.
// The expiry must leave the new body watched, and the ended one alone.
func TestWatchdogExpiryTakesOnlyTheBodyItRead(t *testing.T) {
	var w watchdog
	defer func() {
		w.mu.Lock()
		if w.timer != nil {
			w.timer.Stop()
		}
		w.mu.Unlock()
	}()
	w.next.Store(1) // as if armed long ago: add arms no timer, only the fire below runs
	ended, fresh := new(Body), new(Body)
	ended.src.RC = http.NewResponseController(newConnWriter()) // should the expiry wrongly interrupt it
	w.add(ended, sinceEpoch(time.Now().Add(-time.Second)))     // due
	s := int(ended.watch.slot) - 1
	w.laneRead = func(read int) {
		if read != s {
			return
		}
		w.laneRead = nil
		if !w.remove(ended) {
			t.Error("an ended body's remove lost to an expiry that had not taken it")
		}
		// A new body takes slot s, as add does before it arms the timer
		// (which waits for the expiry's lock).
		fresh.watch.deadline, fresh.watch.slot = sinceEpoch(time.Now().Add(time.Hour)), uint8(s+1)
		if !w.lane[s].CompareAndSwap(nil, fresh) {
			t.Error("slot of the ended body not free")
		}
	}
	w.fire()
	if got := w.lane[s].Load(); got != fresh {
		t.Errorf("slot %d after the expiry holds %p, want the new body %p, still watched", s, got, fresh)
	}
	if !w.remove(fresh) {
		t.Error("the new body's remove found it taken by an expiry it was not due for")
	}
}

// TestWatchdogLeavesEndedBodyAlone (trap: an interrupt after the end): the
// watchdog may pick a body as overdue just as its read ends; once the read
// ended, an interrupt must not touch the connection, whose background read
// would fail and cancel the request's context while the handler runs.
func TestWatchdogLeavesEndedBodyAlone(t *testing.T) {
	w := newConnWriter()
	b := openWatched(t, newSource([]byte(`{"a":1}`), false), w, time.Hour)
	defer b.Finish()
	if err := b.ReadAll(); err != nil {
		t.Fatal(err)
	}
	b.interrupt() // as fire would, had it taken the body before the end (ReadAll took it out)
	if got := w.calls(); len(got) != 0 {
		t.Errorf("deadlines set after the end: %v, want none", got)
	}
}

// TestWatchdogInterruptedBodyNeverAccepted (trap: undoing a past deadline
// that already did its harm): net/http starts its background read of the
// connection as soon as the body's last byte came off it, while the body
// still decodes and checks what it read. An interrupt that comes then (the
// deadline passed) makes that background read fail and cancel the
// request's context, and clearing the deadline at the body's end cannot
// take it back: the body must be rejected as late, never handed to a
// handler whose context is already cancelled; the past deadline stays.
func TestWatchdogInterruptedBodyNeverAccepted(t *testing.T) {
	w := newConnWriter()
	src := &endGap{data: []byte(`{"a":1}`), hit: make(chan struct{}), gate: make(chan struct{})}
	b := openWatched(t, src, w, time.Hour)
	defer b.Finish()
	done := make(chan error, 1)
	go func() { done <- b.ReadAll() }()
	<-src.hit
	expire(b) // the deadline passed: the read has not settled
	close(src.gate)
	if err := <-done; err == nil {
		t.Fatal("a body whose read the watchdog interrupted was accepted")
	}
	if e := b.Breach(); e == nil || e.Stage != limits.StageTimeout {
		t.Errorf("breach: %v, want stage timeout", e)
	}
	if got := w.calls(); len(got) != 1 || got[0].IsZero() || got[0].After(time.Now()) {
		t.Errorf("deadlines set: %v, want the interrupt's only, never cleared", got)
	}
}

// endGap is a connection's body that returns all its bytes and io.EOF in
// one Read, and between its end and that Read's return (where net/http
// starts its background read) waits for gate, after closing hit.
type endGap struct {
	data      []byte
	hit, gate chan struct{}
}

func (e *endGap) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, e.data)
	if e.data = e.data[n:]; len(e.data) > 0 {
		return n, nil
	}
	close(e.hit)
	<-e.gate
	return n, io.EOF
}

// TestWatchdogHoldsNoBodyAfterItsEnd (trap: a process-wide structure that
// keeps every request alive): a body leaves the watchdog when its read
// ends, fails, or its life ends unread, so the watchdog holds only reads
// in progress, and its array points to no body that left.
func TestWatchdogHoldsNoBodyAfterItsEnd(t *testing.T) {
	before, _ := watch.watching()
	for range 100 {
		w := newConnWriter()
		ok := openWatched(t, newSource([]byte(`{"a":1}`), false), w, time.Hour)
		if err := ok.ReadAll(); err != nil {
			t.Fatal(err)
		}
		ok.Finish()
		unread := openWatched(t, newSource([]byte(`{"a":1}`), false), w, time.Hour)
		unread.Finish()
		failed := openWatched(t, io.MultiReader(newSource([]byte(`{"a":`), false), errReader{}), w, time.Hour)
		failed.ReadAll()
		failed.Finish()
	}
	n, stale := watch.watching()
	if n -= before; n != 0 || stale != 0 {
		t.Errorf("watchdog holds %d more bodies after 300 ended ones, and points to %d that left; want 0, 0", n, stale)
	}
}

// TestWatchdogExpiryCostIndependentOfWaitingBodies (trap: a scan of every
// waiting body at each expiry, under the lock every request takes):
// clients that stall on purpose expire one by one, and each expiry must
// cost about the same whether 10 or 10 000 other bodies wait, or the
// clients buy the square of their number in the server's time. With 10 000
// bodies waiting an hour, 100 expiries of one overdue body each make at
// most a few comparisons per level of the heap.
func TestWatchdogExpiryCostIndependentOfWaitingBodies(t *testing.T) {
	var w watchdog
	now := time.Now()
	const waiting, expiries = 10000, 100
	for i := range waiting {
		w.add(new(Body), sinceEpoch(now.Add(time.Hour+time.Duration(i)*time.Millisecond)))
	}
	w.mu.Lock()
	w.compares = 0
	w.mu.Unlock()
	for range expiries {
		// Overdue, and its life ended: the interrupt leaves it alone. Its
		// timer fires too.
		overdue := new(Body)
		overdue.g.close()
		w.add(overdue, sinceEpoch(now.Add(-time.Millisecond)))
		w.fire()
	}
	w.mu.Lock()
	compares := w.compares
	w.timer.Stop()
	w.mu.Unlock()
	// add: up to 14 levels; take: 2 per level; fire: every slot of the
	// lane (the first 64 waiting bodies sit there) and the heap's first not
	// due; the timer's own fire of an overdue body: about as many again. A
	// scan of every waiting body would make 10 000 per expiry.
	if limit := expiries * (2*laneSlots + 4*3*14); compares > limit {
		t.Errorf("%d expiries beside %d waiting bodies made %d deadline comparisons, want at most %d", expiries, waiting, compares, limit)
	}
	if n, _ := w.watching(); n != waiting {
		t.Errorf("%d bodies left waiting, want %d", n, waiting)
	}
}

// expire does to b what the watchdog's fire does to a body past its
// deadline: it takes b out of the watchdog, then interrupts its read.
func expire(b *Body) {
	if s := b.watch.slot; s > 0 {
		watch.lane[s-1].CompareAndSwap(b, nil)
	} else {
		watch.mu.Lock()
		if b.watch.on {
			watch.take(int(b.watch.i))
		}
		watch.mu.Unlock()
	}
	b.interrupt()
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// blockingDeadlineWriter's SetReadDeadline blocks until release is closed,
// after telling entered: a change of the connection's deadline caught in
// progress.
type blockingDeadlineWriter struct {
	http.ResponseWriter
	entered, release chan struct{}
}

func (w *blockingDeadlineWriter) SetReadDeadline(time.Time) error {
	close(w.entered)
	<-w.release
	return nil
}

// TestFinishWaitsForInterruptInProgress (trap: a body whose end of life
// does not wait for the watchdog): an interrupt that is setting the
// connection's read deadline when the handler's end comes must have
// finished before Finish returns; afterwards net/http owns the deadline,
// for the next request's headers, and a late change would override it.
func TestFinishWaitsForInterruptInProgress(t *testing.T) {
	w := &blockingDeadlineWriter{entered: make(chan struct{}), release: make(chan struct{})}
	b := openWatched(t, strings.NewReader("x"), w, time.Hour)
	go expire(b) // what the watchdog does at the deadline
	<-w.entered
	finished := make(chan struct{})
	go func() {
		b.Finish()
		close(finished)
	}()
	select {
	case <-finished:
		t.Fatal("Finish returned while the interrupt was still setting the read deadline")
	case <-time.After(50 * time.Millisecond):
		// Finish waits: the interrupt holds the body's deadline lock. (The
		// wait proves nothing on its own; it gives a Finish that does not
		// wait the time to return.)
	}
	close(w.release)
	<-finished
}

// TestUnwatchReportsInterruptEveryTime: once the watchdog interrupted a
// read, every unwatch reports it, also one that comes after the read
// already settled (Close or Finish after the read's own end).
func TestUnwatchReportsInterruptEveryTime(t *testing.T) {
	w := newConnWriter()
	b := openWatched(t, strings.NewReader("x"), w, time.Hour)
	defer b.Finish()
	expire(b)
	for i := range 3 {
		if !b.unwatch() {
			t.Fatalf("unwatch #%d after an interrupt reported none", i+1)
		}
	}
}
