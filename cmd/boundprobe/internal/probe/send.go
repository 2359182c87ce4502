package probe

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// userAgent is the User-Agent of every request, unless -H sets one.
const userAgent = "boundprobe (https://github.com/boundhttp/boundhttp/cmd/boundprobe)"

// A target is the one URL bodies are sent to, and how.
type target struct {
	url    *url.URL
	method string
	// header is sent with every body: -H, Content-Type, the MCP session.
	header  http.Header
	timeout time.Duration
}

// An UnreachableError reports that no connection (or TLS session) to the
// target could be made.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return "target unreachable: " + e.Err.Error() }

func (e *UnreachableError) Unwrap() error { return e.Err }

// send sends b to t on a new HTTP/1.1 connection and describes what came
// back. It writes the body and reads the response at the same time, so that
// a response sent before the whole body was read (the usual way to refuse
// one) is seen even when the connection is reset afterwards. The error is
// an [*UnreachableError] when no connection could be made; every other
// failure is an [Answer] with no response.
func (t *target) send(ctx context.Context, b *body) (*Answer, error) {
	conn, err := t.dial(ctx)
	if err != nil {
		return nil, &UnreachableError{err}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(t.timeout))

	h := t.header.Clone()
	if h.Get("User-Agent") == "" {
		h.Set("User-Agent", userAgent)
	}
	if c := b.shape.coding(); c != "" {
		h.Set("Content-Encoding", c)
	}
	req := &http.Request{
		Method: t.method, URL: t.url, Host: t.url.Host, Header: h,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Body: io.NopCloser(b.reader()), ContentLength: b.Wire, Close: true,
	}
	if b.Wire == 0 {
		req.Body = http.NoBody // Content-Length: 0, not a chunked body of unknown length
	}
	cw := &countingWriter{w: conn}
	written := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(cw, 32<<10)
		err := req.Write(bw)
		if err == nil {
			err = bw.Flush()
		}
		written <- err
	}()

	a := &Answer{}
	hl := &headerLimit{r: conn, n: maxAnswerHeader}
	resp, rerr := readResponse(bufio.NewReader(hl), req)
	if rerr == nil {
		hl.n = -1 // the body is bounded by ReadAll's budget
		data, err := decoding.ReadAll(resp.Body, resp.Header.Get("Content-Encoding"),
			limits.Budget{MaxWireBytes: maxAnswerBody, MaxDecodedBytes: maxAnswerBody})
		if err != nil {
			data = nil // classified from the header alone
		}
		a.classify(resp, data)
	}
	conn.Close() // ends a write still in progress
	werr := <-written
	if cw.err != nil {
		// net/http reports a failed write of the body as a body read
		// error, without Unwrap: the connection's own error says more.
		werr = cw.err
	}
	a.Sent = cw.n
	if werr != nil && !errors.Is(werr, net.ErrClosed) {
		a.Error = "writing the request: " + limits.Echo(werr.Error())
	}
	if rerr != nil {
		a.Outcome = outcomeOf(rerr)
		if werr != nil && outcomeOf(werr) == OutcomeReset {
			a.Outcome = OutcomeReset
		}
		a.Error = "reading the response: " + limits.Echo(rerr.Error())
		if werr != nil && !errors.Is(werr, net.ErrClosed) {
			a.Error += "; writing the request: " + limits.Echo(werr.Error())
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return a, nil
}

// maxAnswerHeader bounds the bytes of response header read, interim
// responses included: net/http's Transport default for
// MaxResponseHeaderBytes is larger, 10 MB, but an answer to a probe needs
// no more than a few kilobytes.
const maxAnswerHeader = 1 << 20

// errAnswerHeader ends an answer whose header is longer than
// maxAnswerHeader.
var errAnswerHeader = fmt.Errorf("response header longer than %d bytes", maxAnswerHeader)

// headerLimit reads at most n bytes of r, then fails with errAnswerHeader;
// n < 0 means no limit.
type headerLimit struct {
	r io.Reader
	n int64
}

func (l *headerLimit) Read(p []byte) (int, error) {
	if l.n < 0 {
		return l.r.Read(p)
	}
	if l.n == 0 {
		return 0, errAnswerHeader
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// maxInterim is the most 1xx responses skipped before the final one.
const maxInterim = 8

// readResponse reads the final response to req, skipping interim (1xx)
// responses other than 101.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for range maxInterim {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
	return nil, fmt.Errorf("more than %d interim responses", maxInterim)
}

// dial connects to the target, with TLS for https.
func (t *target) dial(ctx context.Context) (net.Conn, error) {
	d := net.Dialer{Timeout: t.timeout}
	conn, err := d.DialContext(ctx, "tcp", hostPort(t.url))
	if err != nil || t.url.Scheme != "https" {
		return conn, err
	}
	tc := tls.Client(conn, &tls.Config{ServerName: t.url.Hostname(), NextProtos: []string{"http/1.1"}})
	hctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// hostPort returns the host and port of u, the scheme's default port if it
// names none.
func hostPort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return net.JoinHostPort(u.Hostname(), p)
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

// countingWriter counts the bytes written through it and keeps the first
// error.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}
