package probe

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHugeResponseHeader: a target that answers with a header that never
// ends must not make the probe read (and keep in memory) all of it: the
// response header is bounded like net/http's Transport bounds it, and the
// exchange is reported as an error. The server tries to send 64 MiB of
// header; a bounded reader closes the connection long before, so the
// server's writes fail. Found: the probe read the whole 64 MiB into one
// header line.
func TestHugeResponseHeader(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wrote := make(chan int64, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			wrote <- -1
			return
		}
		defer conn.Close()
		go http.ReadRequest(bufio.NewReader(conn)) // drain the request
		var n int64
		w := bufio.NewWriterSize(conn, 64<<10)
		_, err = w.WriteString("HTTP/1.1 413 Too Large\r\nX-Huge: ")
		chunk := strings.Repeat("a", 64<<10)
		for i := 0; i < 1024 && err == nil; i++ { // 64 MiB
			var k int
			k, err = w.WriteString(chunk)
			n += int64(k)
		}
		if err == nil {
			err = w.Flush()
		}
		if err == nil {
			n = -2 // everything was taken
		}
		wrote <- n
	}()
	u, _ := url.Parse("http://" + ln.Addr().String())
	tg := &target{url: u, method: http.MethodPost, header: http.Header{}, timeout: 20 * time.Second}
	b, err := newBody(shape{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tg.send(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Outcome == OutcomeAnswered {
		t.Errorf("a 64 MiB header was taken as an answer: %+v", a)
	}
	if n := <-wrote; n == -2 {
		t.Errorf("the probe read all 64 MiB of the response header (outcome %s, error %q)", a.Outcome, a.Error)
	}
}

// TestBudgetOutBeforeRefusal: with -max-requests 1 (or any budget spent
// while bracketing), no body was refused, yet -max-size was never tried:
// the note must say the budget ran out, not that nothing up to -max-size
// was refused. Found: "no body up to -max-size was refused" after one
// body of 40 bytes.
func TestBudgetOutBeforeRefusal(t *testing.T) {
	t.Parallel()
	url := backend(t, limits.Budget{MaxWireBytes: 100000, MaxDecodedBytes: 100000})
	for _, n := range []string{"1", "3"} {
		code, rep, errs := probe(t, "-max-requests", n, "-max-size", "1MiB", url)
		if code != ExitFit || rep == nil {
			t.Fatalf("-max-requests %s: exit %d: %s", n, code, errs)
		}
		c := rep.Identity
		if c.RefusedAt != nil || c.DecodedCeiling >= 1<<20 || strings.Contains(c.Note, "-max-size was refused") || !strings.Contains(c.Note, "-max-requests") {
			t.Errorf("-max-requests %s: ceiling %d, note %q, want a note that the budget ran out", n, c.DecodedCeiling, c.Note)
		}
	}
	var out, errs bytes.Buffer
	Main(context.Background(), []string{"-pause", "0", "-max-requests", "2", url}, &out, &errs)
	if strings.Contains(out.String(), "up to -max-size") || !strings.Contains(out.String(), "before -max-requests ran out") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestOddCeilings: a path that accepts only empty bodies (ceiling 0), and
// ceilings exactly at a power of four (a bracket size) and at -max-size,
// are measured to the byte. Found: the smallest identity body had 1 byte,
// so a path that resets every non-empty body was reported "target
// unreachable" (exit 4) although it answered an empty body with 204.
func TestOddCeilings(t *testing.T) {
	t.Parallel()
	code, rep, errs := probe(t, "-content-type", "text/plain", "-max-size", "64KiB", resetServer(t, 0))
	if code != ExitFit || rep == nil {
		t.Fatalf("ceiling 0: exit %d: %s", code, errs)
	}
	if c := rep.Identity; c.Ceiling != 0 || !c.Exact || c.Accepted == nil || c.RefusedAt == nil || c.RefusedAt.Wire != 1 {
		t.Errorf("ceiling 0: identity %+v, want ceiling 0 exact, refused at 1", c)
	}
	if c := rep.Gzip; c.Accepted != nil || c.Ceiling != 0 || c.RefusedAt == nil || !strings.Contains(c.Note, "smallest") {
		t.Errorf("ceiling 0: gzip %+v, want nothing accepted and a note", c)
	}
	for _, limit := range []int64{4096, 16384, 1 << 16} {
		code, rep, errs := probe(t, "-content-type", "text/plain", "-max-size", "64KiB", resetServer(t, limit))
		if code != ExitFit || rep == nil {
			t.Fatalf("ceiling %d: exit %d: %s", limit, code, errs)
		}
		if limit == 1<<16 {
			if c := rep.Identity; c.Ceiling != limit || c.RefusedAt != nil || c.Exact || !strings.Contains(c.Note, "-max-size") {
				t.Errorf("ceiling at -max-size: %+v", c)
			}
			continue
		}
		checkCeiling(t, "identity", rep.Identity, limit, limit, limit+1, 40)
	}
}

// TestRunReservedHeader: the exported Run validates its Config like the
// command line does, headers included: a Config.Header that sets a header
// the probe owns (Content-Encoding would label identity bodies as br, say;
// Content-Length, Host or Transfer-Encoding would fight the framing) or a
// name that is not a token is refused before any request is sent. Found:
// Run sent identity bodies with "Content-Encoding: br" and measured a
// ceiling from the answers to them.
func TestRunReservedHeader(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	for _, h := range []http.Header{
		{"Content-Encoding": {"br"}}, {"Content-Length": {"5"}}, {"Host": {"elsewhere"}},
		{"Transfer-Encoding": {"chunked"}}, {"Connection": {"Upgrade"}}, {"Upgrade": {"h2c"}}, {"Expect": {"100-continue"}},
		{"content-type": {"text/html"}}, {"Bad Name": {"x"}}, {"X-Ok": {"a\r\nX-Injected: b"}},
	} {
		c := Config{URL: srv.URL, Method: http.MethodPost, Header: h, ContentType: "text/plain", MaxRequests: 2,
			MaxSize: 1024, Timeout: 5 * time.Second}
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run with header %v: no error", h)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent with a header the command line refuses", n)
	}
}

// TestOddTargets: a target that sends 100 Continue and then resets every
// body over a limit is measured to the byte with the refusals reported as
// resets; a target whose refusals are not monotonic (every size that is a
// multiple of 3 refused) still gets at most -max-requests bodies per
// search and a report whose exact ceiling was observed (ceiling accepted,
// ceiling+1 refused).
func TestOddTargets(t *testing.T) {
	t.Parallel()
	serve := func(answer func(conn net.Conn, n int64)) string {
		return testenc.RawServer(t, func(conn net.Conn, req *http.Request) {
			if req != nil {
				answer(conn, req.ContentLength)
			}
		})
	}
	const limit = 50000
	cont := serve(func(conn net.Conn, n int64) {
		io.WriteString(conn, "HTTP/1.1 100 Continue\r\n\r\n")
		if n > limit {
			conn.(*net.TCPConn).SetLinger(0)
			return
		}
		io.WriteString(conn, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
	})
	code, rep, errs := probe(t, "-content-type", "text/plain", "-max-size", "1MiB", cont)
	if code != ExitFit || rep == nil {
		t.Fatalf("100 Continue then reset: exit %d: %s", code, errs)
	}
	checkCeiling(t, "identity", rep.Identity, limit, limit, limit+1, 40)
	if a := rep.Identity.Refusal; a.Outcome != OutcomeReset {
		t.Errorf("refusal %+v, want a reset", a)
	}
	odd := serve(func(conn net.Conn, n int64) {
		status := "204 No Content"
		if n%3 == 0 {
			status = "413 Content Too Large"
		}
		io.WriteString(conn, "HTTP/1.1 "+status+"\r\nConnection: close\r\n\r\n")
	})
	code, rep, errs = probe(t, "-content-type", "text/plain", "-max-size", "1MiB", "-max-requests", "12", odd)
	if code != ExitFit || rep == nil {
		t.Fatalf("non-monotonic: exit %d: %s", code, errs)
	}
	for _, c := range []*Ceiling{rep.Identity, rep.Gzip} {
		if c.Requests > 12 {
			t.Errorf("%d requests, budget 12", c.Requests)
		}
		if c.Exact && (c.RefusedAt == nil || c.RefusedAt.Decoded != c.DecodedCeiling+1 || c.Accepted == nil) {
			t.Errorf("exact without the observations: %+v", c)
		}
	}
}
