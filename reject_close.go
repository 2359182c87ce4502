package boundhttp

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxUnwrap bounds the walk down a chain of wrapped ResponseWriters.
const maxUnwrap = 16

// After a rejection on HTTP/1, the unread rest of the body is drained
// (read and discarded) for at most drainMaxBytes and drainMaxTime, and
// until no byte came for drainIdle, as nginx's lingering close does
// (lingering_time, lingering_timeout), so that the answer reaches the
// client, or a proxy in front, whatever wraps the Middleware's writer. An
// attacker who sends 1 GiB is read for at most these bounds and then
// disconnected; one who stalls is let go after drainIdle.
const (
	drainMaxBytes = 64 << 20
	drainMaxTime  = 5 * time.Second
	drainIdle     = time.Second
)

// endRejectedExchange makes a rejected exchange end so that the answer
// reaches the client although body bytes may still be unread: it is
// called before the answer is written (closeAfterRejection) and after it
// (drainAfterRejection).
//
// On HTTP/1 the connection closes after the answer. A close with unread
// body bytes on the socket makes the kernel answer the peer's next segment
// with a reset that destroys the answer in flight: nginx then reports 502
// and a client still writing sees a broken pipe. net/http avoids it
// (closeWriteAndWait) only when a request is marked "too large" on its own
// writer, which a writer wrapping it without Unwrap (a logging status
// recorder, [http.TimeoutHandler]) hides, and never for a request that
// asked for Connection: close, as nginx's default proxy_pass does. So two
// things are done:
//
//   - closeAfterRejection sets Connection: close and, through every writer
//     it can reach by Unwrap (as [http.ResponseController] does), marks the
//     exchange too large, so that net/http half-closes and lingers before
//     the full close: a zero-byte [http.MaxBytesReader] over a source that
//     always has one byte is read once for each writer;
//   - drainAfterRejection then flushes the answer where the writer allows
//     it and reads and discards the rest of the body within drainMaxBytes
//     and drainMaxTime. This holds whatever wraps the writer: a body that
//     ends within the bounds leaves nothing unread, and the close is clean.
//     A request that expects "100 Continue" is not drained unless its body
//     was read (the client has not sent the body, and reading would ask
//     for it); once read, net/http sent the 100 and the client sends it all.
//
// On HTTP/2 and later, Connection: close would make the server send GOAWAY
// and fail every stream multiplexed on the connection: nothing is done, and
// the server resets only this stream when the handler returns with its body
// unread.
func closeAfterRejection(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor >= 2 {
		return
	}
	w.Header().Set("Connection", "close")
	var p [1]byte
	for range maxUnwrap {
		http.MaxBytesReader(w, oneByte{}, 0).Read(p[:])
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// drainAfterRejection flushes the answer written to w where it can, and
// reads and discards what is left of r's body within drainMaxBytes,
// drainMaxTime and drainIdle; see closeAfterRejection. The time bounds hold
// whatever the client does: the drain runs apart from the handler, which
// waits for it only while bytes keep coming. A read that never returns
// outlives the handler until the client sends or leaves, or the server's
// ReadTimeout ends it; the answer is sent meanwhile, because net/http
// writes the answer of a Connection: close exchange without touching the
// body. A body rejected for its Timeout (timedOut) is drained only where no
// read deadline can be set. A request that expects "100 Continue" is
// drained only if its body was asked for (read at least once: net/http
// then sent the 100, and the client sends the body).
func drainAfterRejection(w http.ResponseWriter, r *http.Request, timedOut, asked bool) {
	if r.ProtoMajor >= 2 || r.Body == nil || r.Body == http.NoBody || (expectsContinue(r) && !asked) {
		return
	}
	rc := http.NewResponseController(w)
	rc.Flush()
	if timedOut && rc.SetReadDeadline(time.Now()) == nil {
		// A body that ran out of time is not waited for again where a read
		// deadline ends the exchange; net/http's own writer is reachable
		// then, and closeAfterRejection's linger holds.
		return
	}
	start := time.Now()
	// Where the writer allows a read deadline, it ends a read that waits
	// longer than drainIdle, and moves on with every read that brings bytes.
	deadline := rc.SetReadDeadline(start.Add(drainIdle)) == nil
	var last atomic.Int64 // when bytes last came, in Unix nanoseconds
	last.Store(start.UnixNano())
	var ended bool // the body came to its end: read after done
	done := make(chan struct{})
	go func() {
		defer close(done)
		ended = discard(r.Body, start, func(now time.Time) {
			last.Store(now.UnixNano())
			if deadline {
				rc.SetReadDeadline(now.Add(min(drainIdle, drainMaxTime-now.Sub(start))))
			}
		})
	}()
	if deadline {
		// Every read ends by the deadline: wait for the drain, then leave
		// the connection as net/http would. A body read to its end leaves
		// it fit for the next request: no deadline, since net/http now
		// reads ahead for that request in the background, and a deadline
		// that ends that read cancels the connection's context, and with it
		// every later request's on the connection (net/http sets the next
		// deadline itself). A body left unread ends net/http's own look for
		// its end at once: it then closes the connection.
		<-done
		if ended {
			rc.SetReadDeadline(time.Time{})
		} else {
			rc.SetReadDeadline(time.Now())
		}
		return
	}
	// No read deadline reaches the connection: wait only while bytes come.
	// A read that never returns is left to the server's ReadTimeout.
	t := time.NewTimer(drainIdle)
	defer t.Stop()
	for { // ends: drainMaxTime bounds it, and every round waits
		select {
		case <-done:
			return
		case <-t.C:
		}
		idle := time.Since(time.Unix(0, last.Load()))
		if idle >= drainIdle || time.Since(start) >= drainMaxTime {
			return
		}
		t.Reset(drainIdle - idle)
	}
}

// discard reads body until it ends, fails, or drainMaxBytes or
// drainMaxTime since start are spent, calling got after each read that
// brought bytes, and reports whether the body came to its end: io.EOF, or
// net/http's ErrBodyReadAfterClose, which it returns once it has read the
// body's end itself (net/http reads and closes a small unread body as the
// answer's headers are written) or closed it after its own look for it.
func discard(body io.Reader, start time.Time, got func(time.Time)) bool {
	buf := drainBufs.Get().(*[drainBufSize]byte)
	defer drainBufs.Put(buf)
	for n := int64(0); n < drainMaxBytes && time.Since(start) < drainMaxTime; {
		k, err := body.Read(buf[:min(drainBufSize, drainMaxBytes-n)])
		n += int64(k)
		if k > 0 {
			got(time.Now())
		}
		if err != nil {
			return err == io.EOF || err == http.ErrBodyReadAfterClose
		}
	}
	return false
}

// expectsContinue reports whether r asked for "100 Continue" before its
// body.
func expectsContinue(r *http.Request) bool {
	for _, v := range r.Header.Values("Expect") {
		if strings.EqualFold(strings.TrimSpace(v), "100-continue") {
			return true
		}
	}
	return false
}

const drainBufSize = 32 << 10

var drainBufs = sync.Pool{New: func() any { return new([drainBufSize]byte) }}

// oneByte is a source that always has one more byte.
type oneByte struct{}

func (oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = 0
	return 1, nil
}

func (oneByte) Close() error { return nil }
