package honest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestSlowUplink (client side, HTTP/2 only): on one HTTP/2 connection a
// client opens an event stream (a GET of text/event-stream, an event every
// 50 ms) and, once its first event is in, uploads 2-3 MiB to a server that
// reads at 2 Mbit/s; then the stream ends early. The client reads it for
// about 1 s, turns to other work while events keep coming, and then
// closes it once two more events were sent (subtest "closed"), or reads
// on once its deadline, 1 s after its headers, has passed by 150 ms and
// closes it at the error (subtest "timeout": Budget.Timeout for ours, a
// context cancelled at the same moment for stock). Either way some events
// are unread when it closes. The upload must complete on the one
// connection with identical bytes, as it does with stock.
//
// What makes the uplink slow: the server's connections read at the rate
// through a throttle, with a 16 KiB receive buffer and an MSS of 1460
// bytes in the SYN-ACK (see narrowSocket), which keep the client's send
// buffer near 1 MiB; the server's HTTP/2 windows (16 MiB) leave the pace
// to the socket. net/http writes DATA frames of up to 512 KiB, each under
// the connection's write lock, and the kernel wakes a blocked writer only
// once a third of its send buffer is free: each frame takes about 2 s,
// in bursts between stalls of most of a second in which no byte of it
// moves. Each run measures the client's writes (in pieces of 16 KiB) and
// logs the longest. The RST_STREAM and the WINDOW_UPDATE for the unread
// events that the stream's end needs wait for that lock; in the "closed"
// case the client closes 20-100 ms into a stall.
//
// Both cases and both protocols run at once: the runs are paced by the
// throttle, and take about 8 s each (-short: 2 MiB) or 13 s (3 MiB).
func TestSlowUplink(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for _, timeout := range []bool{false, true} {
		name := "closed"
		if timeout {
			name = "timeout"
		}
		wg.Go(func() { t.Run(name, slowUplink(timeout).run) })
	}
	wg.Wait()
}

const (
	uplinkRate    = 2e6 / 8 // bytes per second: 2 Mbit/s
	eventEvery    = 50 * time.Millisecond
	eventsBefore  = 20              // about 1 s of events
	streamTimeout = 1 * time.Second // the stream's deadline in the timeout case
)

func slowUplink(timeout bool) workload {
	size := pick[int64](2<<20, 3<<20, 3<<20)
	data := make([]byte, size)
	payload(7, size).Read(data)
	return workload{
		protos:       h2Protos,
		sides:        bothModes,
		concurrent:   true,
		checkConns:   true,
		serverBudget: limits.Budget{MaxWireBytes: 8 << 20, MaxDecodedBytes: 8 << 20},
		listen:       func(t *testing.T) net.Listener { return slowListener(t, uplinkRate) },
		setup: func(p proto, srv *httptest.Server) {
			srv.Config.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerConnection: 16 << 20, MaxReceiveBufferPerStream: 16 << 20}
		},
		tuneBase: measureWrites,
		pass: func(proto) (http.Handler, func(*env) outcome) {
			var uploads atomic.Int32
			flushed := make(chan int, 1)
			mux := http.NewServeMux()
			mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) { eventStream(w, r, flushed) })
			mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
				uploads.Add(1)
				hashAnswer(w, r)
			})
			return mux, func(e *env) outcome {
				o := uplinkExchange(e, data, timeout, flushed)
				if len(o.ex) > 0 {
					o.ex[0].extra = fmt.Sprintf("%d upload(s) reached the handler", uploads.Load())
				}
				o.notes = append(o.notes, writesOf(e.base).String(),
					fmt.Sprintf("%d KiB at %.1f Mbit/s: %v at the throttle's pace", size>>10, uplinkRate*8/1e6,
						time.Duration(float64(size)/uplinkRate*float64(time.Second)).Round(time.Millisecond)))
				return o
			}
		},
	}
}

// uplinkExchange plays the client's part: the event stream, the upload
// started once the stream's first event is in, the stream's early end,
// the upload's answer.
func uplinkExchange(e *env, data []byte, timeout bool, flushed chan int) outcome {
	var o outcome
	upload := make(chan exchange, 1)
	started := false
	startUpload := func() {
		started = true
		go func() {
			req, _ := http.NewRequestWithContext(e.ctx, "POST", e.url+"/upload", bytes.NewReader(data))
			req.Header.Set("Content-Type", "application/octet-stream")
			upload <- e.do(req)
		}()
	}
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	sctx := ctx
	if timeout && e.side.ours {
		sctx = boundhttp.WithBudget(ctx, limits.Budget{Timeout: streamTimeout})
	}
	stream, notes := eventsEndingEarly(e, sctx, cancel, timeout, flushed, startUpload)
	o.notes = append(o.notes, notes...)
	if !started {
		return outcome{ex: []exchange{stream}, notes: o.notes, err: errors.New("the event stream failed before the upload started")}
	}
	select {
	case x := <-upload:
		o.ex = append(o.ex, x, stream)
		if x.err == "" {
			o.notes = append(o.notes, "upload answered: "+x.head)
		}
	case <-e.ctx.Done():
		o.err = errors.New("the upload did not end before the run's deadline")
	}
	return o
}

// eventsEndingEarly opens the event stream with ctx, starts the upload
// once the first event is in, and ends the stream early. The client reads
// for about 1 s and then works on something else, as a consumer slower
// than its stream does, while more events arrive: then it closes the
// stream once two more events were sent, at the start of a stall of the
// upload's writes, or (timeout) reads on once the stream's deadline has
// passed by 150 ms (for stock, cancel ends it at the deadline) and closes
// it at the error.
func eventsEndingEarly(e *env, ctx context.Context, cancel context.CancelFunc, timeout bool, flushed chan int, startUpload func()) (exchange, []string) {
	var notes []string
	req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/events", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := e.client.Do(req)
	if err != nil {
		return exchange{err: "the event stream: " + e.clean(err.Error())}, nil
	}
	headers := time.Now()
	defer resp.Body.Close()
	if timeout && !e.side.ours {
		// Stock has no body deadline: the same clock, on the context.
		stop := time.AfterFunc(streamTimeout, cancel)
		defer stop.Stop()
	}
	stream := exchange{status: resp.StatusCode, proto: protoOf(resp)}
	br := bufio.NewReader(resp.Body)
	if _, err := readEvent(br, 0); err != nil {
		return exchange{err: "the first event: " + e.clean(err.Error())}, notes
	}
	startUpload()
	n := 1
	for ; n < eventsBefore-2; n++ {
		if _, err := readEvent(br, n); err != nil {
			stream.err = fmt.Sprintf("event %d: %s", n, e.clean(err.Error()))
			return stream, notes
		}
	}
	// The client's other work, while events keep coming: until two more
	// were sent and had 20 ms to arrive, or until the deadline has
	// passed by 150 ms.
	if !timeout {
		for more := true; more; {
			select {
			case i := <-flushed:
				more = i < n+2
			case <-e.ctx.Done():
				stream.err = "waiting for the events after the last read: " + e.ctx.Err().Error()
				return stream, notes
			}
		}
		time.Sleep(20 * time.Millisecond)
		// Close at the start of a stall of the upload's writes (see
		// narrowSocket): the close then waits for the write lock with the
		// connection's writes at a standstill for most of a second.
		if d, ok := writesOf(e.base).blocked(e.ctx, 20*time.Millisecond, 100*time.Millisecond, 5*time.Second); ok {
			notes = append(notes, fmt.Sprintf("the client closes the stream %v into a stall of the upload's writes", d.Round(time.Millisecond)))
		} else {
			notes = append(notes, "no stall of the upload's writes began within 5 s: the close is not timed to one")
		}
	} else {
		time.Sleep(time.Until(headers.Add(streamTimeout + 150*time.Millisecond)))
		for ; n < 100*int(streamTimeout/eventEvery); n++ { // ends: the deadline passed
			if _, err = readEvent(br, n); err != nil {
				break
			}
		}
		switch {
		case errors.Is(err, limits.ErrTimeout) || errors.Is(err, context.Canceled):
			stream.extra = "ended at its deadline"
		case err == nil:
			stream.err = fmt.Sprintf("no end after %d events", n)
		default:
			stream.err = e.clean(err.Error())
		}
		notes = append(notes, fmt.Sprintf("the stream ended %v after its headers, after %d events: %v", time.Since(headers).Round(time.Millisecond), n, err))
	}
	start := time.Now()
	resp.Body.Close()
	took := time.Since(start)
	if !timeout {
		stream.extra = fmt.Sprintf("closed by the client after %d events", n)
	}
	notes = append(notes, fmt.Sprintf("the stream's Close took %v, %v after its headers", took.Round(time.Microsecond), start.Sub(headers).Round(time.Millisecond)))
	return stream, notes
}

// eventStream sends an event every eventEvery until the client leaves,
// and the number of each event it flushed to flushed, if there is room.
func eventStream(w http.ResponseWriter, r *http.Request, flushed chan int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	tick := time.NewTicker(eventEvery)
	defer tick.Stop()
	for i := range int(10 * time.Minute / eventEvery) { // ends: the client leaves first
		fmt.Fprintf(w, "id: %d\ndata: tick %d\n\n", i, i)
		if rc.Flush() != nil {
			return
		}
		select {
		case <-flushed: // the client wants the latest
		default:
		}
		select {
		case flushed <- i:
		default:
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// readEvent reads the next event, which must be number i.
func readEvent(br *bufio.Reader, i int) (string, error) {
	var ev strings.Builder
	for range 8 { // an event is two lines and a blank one
		line, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if line == "\n" {
			if want := fmt.Sprintf("id: %d\ndata: tick %d\n", i, i); ev.String() != want {
				return "", fmt.Errorf("event %q, want %q", ev.String(), want)
			}
			return ev.String(), nil
		}
		ev.WriteString(line)
	}
	return "", fmt.Errorf("event %d: no end: %q", i, ev.String())
}

// slowListener listens on loopback with narrowSocket and reads every
// accepted connection at rate bytes per second.
func slowListener(t *testing.T, rate float64) net.Listener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = narrowSocket(fd) }); cerr != nil {
			return cerr
		}
		return err
	}}
	ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return &throttledListener{Listener: ln, rate: rate}
}

type throttledListener struct {
	net.Listener
	rate float64
}

func (l *throttledListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &throttledConn{Conn: c, rate: l.rate}, nil
}

// throttledConn reads at most rate bytes per second on average, in reads
// of at most 4 KiB.
type throttledConn struct {
	net.Conn
	rate  float64
	mu    sync.Mutex
	start time.Time
	read  int64
}

func (c *throttledConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.Conn.Read(p[:min(len(p), 4<<10)])
	if c.start.IsZero() {
		c.start = time.Now()
	}
	c.read += int64(n)
	due := c.start.Add(time.Duration(float64(c.read) / c.rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		time.Sleep(d) // the throttle's pace
	}
	return n, err
}

// measureWrites wraps the connections base dials (whatever dials them,
// our framing count included, which it unwraps through NetConn) to
// measure how long their writes block and count their bytes.
func measureWrites(base *http.Transport) {
	m := new(writeMeter)
	dial := base.DialContext
	base.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &meteredConn{Conn: c, m: m}, nil
	}
	meters.Store(base, m)
}

var meters sync.Map // *http.Transport -> *writeMeter

func writesOf(base *http.Transport) *writeMeter {
	if v, ok := meters.Load(base); ok {
		return v.(*writeMeter)
	}
	return nil
}

// A writeMeter records the longest write, and the longest span of writes
// that follow each other with less than a millisecond between them: over
// TLS, one DATA frame is written as many records.
type writeMeter struct {
	mu                 sync.Mutex
	longest            time.Duration
	longestBytes       int
	span               time.Duration
	spanBytes          int64
	curStart, lastEnd  time.Time
	curBytes           int64
	writes, slowWrites int
	bytesWritten       int64
	bytesRead          int64
	writing            time.Time // when the write in progress began, if one is
	frames             int       // writes of 256 KiB or more
	frameMin, frameMax time.Duration
}

// frame records the time a write of 256 KiB or more took.
func (m *writeMeter) frame(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.frames == 0 || d < m.frameMin {
		m.frameMin = d
	}
	m.frameMax = max(m.frameMax, d)
	m.frames++
}

// blocked waits, polling, until a write has been in progress for at least
// young and at most old, and returns for how long; false if none was
// within limit.
func (m *writeMeter) blocked(ctx context.Context, young, old, limit time.Duration) (time.Duration, bool) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(limit); time.Now().Before(end); {
		m.mu.Lock()
		w := m.writing
		m.mu.Unlock()
		if d := time.Since(w); !w.IsZero() && d >= young && d <= old {
			return d, true
		}
		select {
		case <-ctx.Done():
			return 0, false
		case <-tick.C:
		}
	}
	return 0, false
}

func (m *writeMeter) begin(start time.Time) {
	m.mu.Lock()
	m.writing = start
	m.mu.Unlock()
}

func (m *writeMeter) record(start, end time.Time, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writing = time.Time{}
	m.writes++
	m.bytesWritten += int64(n)
	if d := end.Sub(start); d > m.longest {
		m.longest, m.longestBytes = d, n
	}
	if end.Sub(start) > 500*time.Millisecond {
		m.slowWrites++
	}
	if start.Sub(m.lastEnd) > time.Millisecond {
		m.curStart, m.curBytes = start, 0
	}
	m.curBytes += int64(n)
	m.lastEnd = end
	if d := end.Sub(m.curStart); d > m.span {
		m.span, m.spanBytes = d, m.curBytes
	}
}

func (m *writeMeter) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	per := time.Duration(0)
	if m.spanBytes > 0 {
		per = time.Duration(float64(m.span) * float64(512<<10) / float64(m.spanBytes))
	}
	s := fmt.Sprintf("client writes (in pieces of 16 KiB at most): %d, %d KiB; longest %v for %d KiB (%d over 500 ms); longest run of writes %v for %d KiB, %v per 512 KiB",
		m.writes, m.bytesWritten>>10, m.longest.Round(time.Millisecond), m.longestBytes>>10, m.slowWrites,
		m.span.Round(time.Millisecond), m.spanBytes>>10, per.Round(time.Millisecond))
	if m.frames > 0 {
		s += fmt.Sprintf("; %d DATA frames of 256-512 KiB written in %v to %v each", m.frames, m.frameMin.Round(time.Millisecond), m.frameMax.Round(time.Millisecond))
	}
	return s
}

// meteredConn reports its writes' durations and its bytes to m; NetConn unwraps it, as
// our Transport and crypto/tls expect of a wrapper.
type meteredConn struct {
	net.Conn
	m *writeMeter
}

// Write writes p in pieces of at most 16 KiB, as TLS writes its records,
// so that the meter sees a stall (the kernel wakes a writer only once a
// third of its send buffer is free) whatever the size of the frame.
func (c *meteredConn) Write(p []byte) (int, error) {
	if len(p) >= 256<<10 { // a DATA frame written whole (h2c; TLS writes records)
		start := time.Now()
		defer func() { c.m.frame(time.Since(start)) }()
	}
	var n int
	for n < len(p) {
		piece := p[n:min(len(p), n+16<<10)]
		start := time.Now()
		c.m.begin(start)
		k, err := c.Conn.Write(piece)
		c.m.record(start, time.Now(), k)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (c *meteredConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.m.mu.Lock()
	c.m.bytesRead += int64(n)
	c.m.mu.Unlock()
	return n, err
}

func (c *meteredConn) NetConn() net.Conn { return c.Conn }

// socketBytes returns the bytes written and read on the connections m
// measured.
func (m *writeMeter) socketBytes() (written, read int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytesWritten, m.bytesRead
}
