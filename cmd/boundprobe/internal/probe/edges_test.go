package probe

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// resetServer starts a server that resets the connection (SO_LINGER 0),
// without an answer, when a request declares more than limit bytes, and
// answers 204 otherwise.
func resetServer(t *testing.T, limit int64) string {
	t.Helper()
	return testenc.RawServer(t, func(conn net.Conn, req *http.Request) {
		if req == nil {
			return
		}
		if req.ContentLength > limit {
			conn.(*net.TCPConn).SetLinger(0)
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(conn, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
	})
}

// TestReset checks that a refusal by reset is measured and reported as a
// reset, and that a search that meets no refusal up to -max-size says so.
func TestReset(t *testing.T) {
	t.Parallel()
	const limit = 100000
	code, rep, errs := probe(t, "-max-size", "1MiB", resetServer(t, limit))
	if code != ExitFit || rep == nil {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkCeiling(t, "identity", rep.Identity, limit, limit, limit+1, 40)
	if a := rep.Identity.Refusal; a == nil || a.Outcome != OutcomeReset || a.Status != 0 || a.Error == "" {
		t.Errorf("identity refusal %+v, want a reset", a)
	}
	// 1 MiB of gzip is 6.6 KB on the wire: never refused.
	gz := shape{json: true, gzip: true}
	if c := rep.Gzip; c.RefusedAt != nil || c.Exact || c.DecodedCeiling != 1<<20 || c.Ceiling != wireOf(t, gz, 1<<20) || c.Note == "" {
		t.Errorf("gzip: %+v, want ceiling %d (decoded 1 MiB), nothing refused, a note", c, wireOf(t, gz, 1<<20))
	}
}

// TestShortBudget checks that a budget too small to be exact gives an
// honest interval that holds the ceiling, within the budget.
func TestShortBudget(t *testing.T) {
	t.Parallel()
	const wire = 314159
	url := backend(t, limits.Budget{MaxWireBytes: wire, MaxDecodedBytes: 1 << 20})
	code, rep, errs := probe(t, "-max-requests", "12", url)
	if code != ExitFit || rep == nil {
		t.Fatalf("exit %d: %s", code, errs)
	}
	c := rep.Identity
	if c.Requests != 12 || c.Exact || c.Ceiling > wire || c.RefusedAt == nil || c.RefusedAt.Wire <= wire || c.Note == "" {
		t.Errorf("identity: %+v, want 12 requests, an interval around %d and a note", c, wire)
	}
	if rep.Gzip.Requests > 12 {
		t.Errorf("gzip: %d requests, want at most 12", rep.Gzip.Requests)
	}
}

// TestTable checks the default output: the figures and who refused.
func TestTable(t *testing.T) {
	t.Parallel()
	const wire, decoded = 314159, 1 << 20
	url := backend(t, limits.Budget{MaxWireBytes: wire, MaxDecodedBytes: decoded})
	var out, errs bytes.Buffer
	if code := Main(context.Background(), []string{"-pause", "0", url}, &out, &errs); code != ExitFit {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	for _, want := range []string{"identity  314159", "boundhttp problem: 413, stage wire, limit 314159, observed 314160", "1048576", "stage decoded, limit 1048576, observed 1048577"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// TestExitCodes checks usage errors (1), -h (0) and unreachable targets
// (4); 0 and 3 after a measurement are checked by the other tests.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/"
	ln.Close()
	// notHTTP closes every connection without an answer.
	notHTTP := testenc.RawServer(t, func(net.Conn, *http.Request) {})
	plain := backend(t, limits.Budget{}) // answers "ok" as text/plain: no MCP
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{}, ExitUsage},
		{[]string{closed, closed}, ExitUsage},
		{[]string{"-nosuchflag", closed}, ExitUsage},
		{[]string{"-max-requests", "0", closed}, ExitUsage},
		{[]string{"-pause", "-1s", closed}, ExitUsage},
		{[]string{"-pause", "soon", closed}, ExitUsage},
		{[]string{"-max-size", "10", closed}, ExitUsage},
		{[]string{"-max-size", "2TiB", closed}, ExitUsage},
		{[]string{"-timeout", "0", closed}, ExitUsage},
		{[]string{"-headroom", "-0.5", closed}, ExitUsage},
		{[]string{"-H", "NoColon", closed}, ExitUsage},
		{[]string{"-H", "Content-Length: 5", closed}, ExitUsage},
		{[]string{"-H", "X-A: b\r\nX-B: c", closed}, ExitUsage},
		{[]string{"-X", "GE T", closed}, ExitUsage},
		{[]string{"ftp://127.0.0.1/"}, ExitUsage},
		{[]string{"http://user:pw@127.0.0.1/"}, ExitUsage},
		{[]string{"-h"}, ExitFit},
		{[]string{closed}, ExitUnreachable},
		{[]string{"-mcp", closed}, ExitUnreachable},
		{[]string{notHTTP}, ExitUnreachable},
		{[]string{"-mcp", plain}, ExitUnreachable},
		{[]string{closed, "-max-requests", "3"}, ExitUnreachable}, // flags after the URL
	} {
		var out, errs bytes.Buffer
		code := Main(context.Background(), append([]string{"-pause", "0", "-timeout", "5s"}, tc.args...), &out, &errs)
		if code != tc.want {
			t.Errorf("boundprobe %q: exit %d, want %d (%s)", tc.args, code, tc.want, errs.String())
		}
		if code == ExitUnreachable && out.Len() != 0 {
			t.Errorf("boundprobe %q: printed a report for an unreachable target: %s", tc.args, out.String())
		}
	}
}
