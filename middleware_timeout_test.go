package boundhttp_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestTimeoutDetailHidesSocketAddresses pins the trap of a 408 that quotes
// the connection's error ("read tcp 10.0.0.5:8080->10.0.0.2:51234: i/o
// timeout"): behind a proxy that reveals internal addresses. A stalled body
// under Budget.Timeout ends at the read deadline; neither the problem's
// detail, nor the log record, nor the Error() text a streaming handler reads
// may hold an address or a port, and the deadline error stays reachable
// through errors.Is.
func TestTimeoutDetailHidesSocketAddresses(t *testing.T) {
	t.Parallel()
	for _, streaming := range []bool{false, true} {
		rec := &logRecorder{}
		handlerErr := make(chan error, 1)
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{Timeout: 200 * time.Millisecond},
			Streaming: streaming, Logger: slog.New(rec)})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := io.ReadAll(r.Body)
			handlerErr <- err
		})))
		t.Cleanup(s.Close)
		conn, err := net.Dial("tcp", s.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() }) // before the server's Close
		fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nfirst bytes")
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("stalled body (streaming %v): %v", streaming, err)
		}
		answer, _ := io.ReadAll(resp.Body)
		conn.Close()
		p := problem(t, string(answer))
		if resp.StatusCode != 408 || p.Stage != "timeout" {
			t.Fatalf("stalled body (streaming %v): %d %s, want 408 stage timeout", streaming, resp.StatusCode, answer)
		}
		_, serverPort, _ := net.SplitHostPort(s.Listener.Addr().String())
		_, clientPort, _ := net.SplitHostPort(conn.LocalAddr().String())
		leaks := func(what, s string) {
			t.Helper()
			for _, a := range []string{"127.0.0.1", ":" + serverPort, ":" + clientPort, "tcp"} {
				if strings.Contains(s, a) {
					t.Errorf("streaming %v: %s holds %q: %q", streaming, what, a, s)
				}
			}
		}
		leaks("the problem's detail", p.Detail)
		leaks("the whole answer", string(answer))
		rec.mu.Lock()
		if len(rec.recs) != 1 {
			t.Errorf("streaming %v: %d log records, want 1", streaming, len(rec.recs))
		}
		for _, r := range rec.recs {
			var b strings.Builder
			b.WriteString(r.Message)
			r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%s", a.Key, a.Value); return true })
			leaks("the log record", b.String())
		}
		rec.mu.Unlock()
		if streaming {
			select {
			case err := <-handlerErr:
				if err == nil {
					t.Fatalf("streaming handler read the stalled body without error")
				}
				leaks("the handler's error", err.Error())
				if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.Is(err, limits.ErrTimeout) {
					t.Errorf("handler's error %v: errors.Is os.ErrDeadlineExceeded %v, limits.ErrTimeout %v; want both",
						err, errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, limits.ErrTimeout))
				}
			case <-time.After(5 * time.Second):
				t.Fatal("streaming handler never returned")
			}
		}
	}
}
