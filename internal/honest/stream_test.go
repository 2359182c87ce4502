package honest

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// Long event streams with heartbeats, as an MCP server answers a slow
// tools/call: a POST of a small JSON request that asks for
// text/event-stream, answered with a comment line every 10 ms and, at the
// end, the result. Our Transport streams (Streaming), and the handler
// reads its request through a streaming Middleware. Every heartbeat must
// arrive, in order, as it is sent (no gap of a second), and the stream
// must end as with stock. The Middleware runs on the default budget and
// on one whose Timeout (1 s) is far shorter than the stream.
//
// TestHeartbeats runs on loopback in real time: 3 s (-short), 5 s
// (default), 2 minutes (-honest.long). TestHeartbeatsSynctest runs the
// same stacks (and a whole-body Middleware besides) over net.Pipe
// connections in a testing/synctest bubble, in synthetic time: 1 minute
// (-short), 10 minutes (default), 2 hours (-honest.long) of heartbeats,
// each run well under a second to about 20 s of real time. There
// our base transports dial the pipe, so our framing count (which wraps
// the base's own dialer) is not in the path; TestHeartbeats has it.

const heartbeatEvery = 10 * time.Millisecond

// mcpCall is the request every heartbeat stream answers.
const mcpCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow_report","arguments":{}}}`

// heartbeats returns the handler: n heartbeats, then the result.
func heartbeats(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var call struct {
			ID int `json:"id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&call); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		tick := time.NewTicker(heartbeatEvery)
		defer tick.Stop()
		for i := range n {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
			fmt.Fprintf(w, ": heartbeat %d\n\n", i)
			if rc.Flush() != nil {
				return
			}
		}
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[]}}\n\n", call.ID)
	}
}

// readHeartbeats sends the call and reads the whole stream of n
// heartbeats.
func readHeartbeats(ctx context.Context, client *http.Client, url string, n int, clean func(string) string) (exchange, []string) {
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/mcp", strings.NewReader(mcpCall))
	if err != nil {
		return exchange{err: err.Error()}, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return exchange{err: clean(err.Error())}, nil
	}
	defer resp.Body.Close()
	x := exchange{status: resp.StatusCode, proto: protoOf(resp)}
	h := sha256.New()
	br := bufio.NewReader(resp.Body)
	last := time.Now()
	var gap time.Duration
	var beats int
	var result bool
	for i := 0; i < 2*n+10; i++ { // ends: the stream has n+1 events
		line, err := br.ReadString('\n')
		h.Write([]byte(line))
		x.n += int64(len(line))
		if err != nil {
			if !errors.Is(err, io.EOF) {
				x.err = fmt.Sprintf("after %d heartbeats: %s", beats, clean(err.Error()))
			}
			break
		}
		switch {
		case line == "\n":
			now := time.Now()
			gap = max(gap, now.Sub(last))
			last = now
		case line == fmt.Sprintf(": heartbeat %d\n", beats):
			beats++
		case strings.HasPrefix(line, "data: ") && strings.Contains(line, `"result"`):
			result = true
		case strings.HasPrefix(line, "event: "):
		default:
			x.err = fmt.Sprintf("after %d heartbeats: unexpected line %q", beats, line)
		}
		if x.err != "" {
			break
		}
	}
	x.sum = hex.EncodeToString(h.Sum(nil))
	x.extra = fmt.Sprintf("%d heartbeats, result %v", beats, result)
	if x.err == "" && (beats != n || !result) {
		x.err = fmt.Sprintf("the stream ended after %d of %d heartbeats, result %v", beats, n, result)
	}
	if x.err == "" && gap > time.Second {
		x.err = fmt.Sprintf("a gap of %v between two events: the stream was not delivered as sent", gap)
	}
	return x, []string{fmt.Sprintf("%d heartbeats, the longest gap between two events %v", beats, gap.Round(time.Millisecond))}
}

// heartbeatBudgets are the Middleware's budgets the heartbeats run under:
// the default, and a Timeout of 1 s for the request body, far shorter
// than the stream that answers it (the handler decodes its JSON and
// stops reading before io.EOF, as json.Decoder does).
var heartbeatBudgets = []struct {
	name   string
	budget limits.Budget
	sides  []side
}{
	{"default", limits.Budget{}, []side{ours(streamMW, noOuter), ours(streamMW, sleepOuter)}},
	{"timeout", limits.Budget{Timeout: time.Second}, []side{ours(wholeMW, noOuter), ours(streamMW, noOuter)}},
}

func TestHeartbeats(t *testing.T) {
	t.Parallel()
	n := pick(300, 500, 12000)
	var wg sync.WaitGroup
	for _, bc := range heartbeatBudgets {
		w := workload{
			protos:       allProtos,
			sides:        bc.sides,
			serverBudget: bc.budget,
			streaming:    true,
			concurrent:   true, // paced by the heartbeats
			factor:       1.5,
			slack:        2 * time.Second,
			deadline:     time.Duration(n)*heartbeatEvery + 2*time.Minute,
			pass: func(proto) (http.Handler, func(*env) outcome) {
				return heartbeats(n), func(e *env) outcome {
					x, notes := readHeartbeats(e.ctx, e.client, e.url, n, e.clean)
					return outcome{ex: []exchange{x}, notes: notes}
				}
			},
		}
		wg.Go(func() { t.Run("budget="+bc.name, w.run) })
	}
	wg.Wait()
}

func TestHeartbeatsSynctest(t *testing.T) {
	t.Parallel()
	n := pick(6000, 60000, 720000) // of 10 ms: 1 minute, 10 minutes, 2 hours
	for _, bc := range heartbeatBudgets {
		t.Run("budget="+bc.name, func(t *testing.T) {
			sides := bc.sides
			if bc.name == "default" {
				sides = append([]side{ours(wholeMW, noOuter)}, sides...)
			}
			for _, p := range allProtos {
				t.Run(p.name, func(t *testing.T) {
					var ctrl outcome
					if !t.Run(stock.name, func(t *testing.T) {
						ctrl = heartbeatsInBubble(t, p, stock, bc.budget, n)
						if msg := ctrl.failure(p); msg != "" {
							t.Fatalf("the control (stock net/http) failed, so the workload is wrong, not the library: %s", msg)
						}
					}) {
						return
					}
					for _, s := range sides {
						t.Run(s.name, func(t *testing.T) {
							got := heartbeatsInBubble(t, p, s, bc.budget, n)
							workload{factor: 1.5, slack: 2 * time.Second}.compare(t, ctrl, got)
						})
					}
				})
			}
		})
	}
}

// heartbeatsInBubble runs the heartbeat stream over p through s in a
// testing/synctest bubble, on net.Pipe connections.
func heartbeatsInBubble(t *testing.T, p proto, s side, b limits.Budget, n int) outcome {
	var o outcome
	cert, leaf := selfSigned(t)
	began := time.Now()
	synctest.Test(t, func(t *testing.T) {
		h := http.Handler(heartbeats(n))
		if s.mw != noMW {
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: b, Streaming: s.mw == streamMW})
			if err != nil {
				t.Fatal(err)
			}
			h = mw(h)
		}
		l := testenc.NewPipeListener()
		l.Wrap = func(c net.Conn) net.Conn { return buffered(c) }
		srv := &http.Server{Handler: withOuter(s.outer, h), Protocols: new(http.Protocols)}
		scheme := "http"
		switch {
		case p.tls:
			scheme = "https"
			srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
			if p.h2 {
				srv.Protocols.SetHTTP2(true)
			} else {
				srv.Protocols.SetHTTP1(true)
			}
			go srv.ServeTLS(l, "", "")
		case p.h2:
			srv.Protocols.SetUnencryptedHTTP2(true)
			go srv.Serve(l)
		default:
			srv.Protocols.SetHTTP1(true)
			go srv.Serve(l)
		}
		base := baseTransport(s.ours, p, leaf)
		base.DialContext = l.Dial
		var rt http.RoundTripper = base
		if s.ours {
			// Hours of heartbeats carry more than the default 4 MiB: the
			// caller of a stream that long raises the budget, as it must.
			rt = &boundhttp.Transport{Base: base, Streaming: true,
				Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20}}
		}
		start := time.Now()
		x, notes := readHeartbeats(t.Context(), &http.Client{Transport: rt}, scheme+"://honest.test", n, func(s string) string { return s })
		o = outcome{ex: []exchange{x}, notes: notes, elapsed: time.Since(start)}
		base.CloseIdleConnections()
		srv.Close()
		l.Close()
	})
	t.Logf("%s: %v synthetic, %v real", s.name, o.elapsed, time.Since(began).Round(time.Millisecond))
	for _, n := range o.notes {
		t.Logf("%s: %s", s.name, n)
	}
	return o
}

// bufferedConn is a net.Pipe end whose writes are buffered (up to 64
// writes), as a socket's are: on a bare net.Pipe a write waits for the
// peer's read, and TLS, whose two ends both write after the handshake,
// deadlocks. Reads and their deadlines are the pipe's; Close closes the
// pipe once what was written is delivered (or the peer closes).
type bufferedConn struct {
	net.Conn
	writes  chan []byte
	closing chan struct{}
	once    sync.Once
	mu      sync.Mutex
	err     error // the pipe's write error, once there is one
}

func buffered(c net.Conn) *bufferedConn {
	b := &bufferedConn{Conn: c, writes: make(chan []byte, 64), closing: make(chan struct{})}
	go b.deliver()
	return b
}

// deliver writes what Write buffered to the pipe, until Close and the
// buffer is empty, or the pipe fails.
func (b *bufferedConn) deliver() {
	defer b.Conn.Close()
	for {
		select {
		case p := <-b.writes:
			if _, err := b.Conn.Write(p); err != nil {
				b.mu.Lock()
				b.err = err
				b.mu.Unlock()
				return
			}
		case <-b.closing:
			for { // what is left, then close: ends, the buffer is finite
				select {
				case p := <-b.writes:
					if _, err := b.Conn.Write(p); err != nil {
						return
					}
				default:
					return
				}
			}
		}
	}
}

func (b *bufferedConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	select {
	case b.writes <- append([]byte(nil), p...):
		return len(p), nil
	case <-b.closing:
		return 0, net.ErrClosed
	}
}

func (b *bufferedConn) Close() error {
	b.once.Do(func() { close(b.closing) })
	return nil
}
