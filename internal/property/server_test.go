package property

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// What wraps the Middleware on the server side, and the budget's state.
var (
	wraps  = []string{"none", "timeout-handler", "two-middlewares", "writer-without-unwrap"}
	states = []string{"empty", "busy", "full"}
)

// A scase is a generated request: an xcase's protocol, framing, coding,
// size, stop and shape, with what wraps the Middleware, the budget's state
// and whether the client sends Expect: 100-continue.
type scase struct {
	xcase
	Wrap, State string
	Expect      bool
}

func (c scase) String() string {
	return fmt.Sprintf("%v wrap=%s state=%s expect=%v", c.xcase, c.Wrap, c.State, c.Expect)
}

// generateServer returns server case i of the sample of seed.
func generateServer(seed uint64, i int) scase {
	c := generate(seed^0x5e4e, i)
	r := rand.New(rand.NewPCG(seed, uint64(i)^0xfeed))
	s := scase{xcase: c, Wrap: wraps[r.IntN(len(wraps))], State: states[r.IntN(len(states))], Expect: r.IntN(4) == 0}
	s.Method, s.Status, s.Entry = "POST", 200, "middleware"
	if s.Proto == "none" {
		s.Proto = protos[r.IntN(len(protos))]
	}
	if s.Framing == "close" {
		s.Framing = "chunked" // a request has no close-delimited body
	}
	if s.Stop == "stall" {
		s.Stop = "complete" // the server's stalls are the honest suite's and the timeout tests'
	}
	return s
}

// want returns the model's verdict on a request: the client's verdict on the
// same body, except that a request the budget cannot hold is refused at
// stage inflight and a cut is answered (if at all) with a refusal.
func (c scase) want() expect {
	w := c.xcase
	w.Entry = "decoding" // no HTTP rules of a response (206, a length of 0)
	e := w.want()
	wire := c.wire()
	cut := c.Stop == "after-headers" || c.Stop == "mid-body"
	switch {
	case strings.HasPrefix(c.Proto, "h2") && cut:
		return expect{} // the client resets the stream: it sees no answer
	case c.Wrap == "timeout-handler" && cut:
		// The client closed its side: net/http cancels the request's
		// context, and http.TimeoutHandler answers 503 with no body
		// whatever the handler wrote (stock behaviour), unless the
		// handler answered first.
		return expect{either: true}
	case len(wire) == 0 && c.Framing == "length":
		return expect{ok: true} // a length of 0: no body, whatever the codings
	case codings[c.Coding].refused != "":
		return e // refused at its headers, before any room is asked for
	case cut:
		return expect{} // a cut: refused at integrity, or before (inflight, a limit)
	case c.State == "full" && len(wire) > 0:
		// No room: refused at inflight, unless the headers or the first
		// bytes are refused first.
		return expect{stages: append(e.stages, limits.StageInFlight)}
	}
	return e
}

// A server is a Middleware over one protocol, with its own budget, around
// a handler that answers 200 and the sha256 of the body it read whole.
type server struct {
	srv   *httptest.Server
	proto string
	f     *limits.InFlight
	once  sync.Once
	hc    *http.Client
}

func newServer(t *testing.T, proto string) *server {
	s := &server{proto: proto, f: limits.NewInFlight(32 << 20)}
	b := budget
	b.Timeout = 20 * time.Second
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: b, InFlight: s.f})
	if err != nil {
		t.Fatal(err)
	}
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := io.ReadAll(r.Body)
		if err != nil {
			return // the Middleware answers its own refusals
		}
		sum := sha256.Sum256(got)
		fmt.Fprintf(w, "%d %s", len(got), hex.EncodeToString(sum[:]))
	}))
	wrapped := map[string]http.Handler{
		"none":                  inner,
		"timeout-handler":       http.TimeoutHandler(inner, 30*time.Second, "timeout"),
		"two-middlewares":       mw(inner),
		"writer-without-unwrap": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inner.ServeHTTP(plainWriter{w}, r) }),
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wrapped[r.Header.Get("X-Wrap")].ServeHTTP(w, r)
	}))
	startProto(t, s.srv, proto)
	return s
}

// plainWriter hides every interface of the writer it wraps but the three
// methods of http.ResponseWriter, Unwrap included.
type plainWriter struct{ w http.ResponseWriter }

func (p plainWriter) Header() http.Header         { return p.w.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p plainWriter) WriteHeader(code int)        { p.w.WriteHeader(code) }

// TestServerExchangesKeepThePromises generates requests over the model's
// dimensions (protocol, framing, Content-Encoding lines, size around the
// limit, where the client stops, the body's shape) and the server's own
// (what wraps the Middleware, the budget's state: empty, busy, full;
// Expect: 100-continue), and checks the oracles: a body the handler got is
// the client's decoded bytes, a refusal reaches the client as its stage's
// status (StatusOf) with a bounded answer, the budget is back at its state.
func TestServerExchangesKeepThePromises(t *testing.T) {
	t.Parallel()
	n := sampleSize()
	servers := map[string]*server{}
	for _, p := range protos {
		servers[p] = newServer(t, p)
	}
	failed := 0
	for i := range n {
		c := generateServer(*seedFlag, i)
		bad := checkServer(c, runServer(servers[c.Proto], c))
		if len(bad) > 0 {
			if failed++; failed <= 20 {
				t.Errorf("server case %d of seed %d: %v\n\t%s", i, *seedFlag, c, strings.Join(bad, "\n\t"))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d server cases failed (seed %d)", failed, n, *seedFlag)
	}
	t.Logf("%d server cases, seed %d", n, *seedFlag)
}

// checkServer returns the oracles' verdicts on a server case.
func checkServer(c scase, o outcome) []string {
	want := c.want()
	var bad []string
	fail := func(f string, a ...any) { bad = append(bad, fmt.Sprintf(f, a...)) }
	if o.panics != nil {
		return []string{fmt.Sprintf("panicked: %v", o.panics)}
	}
	data := c.data()
	sum := sha256.Sum256(data)
	echo := fmt.Sprintf("%d %s", len(data), hex.EncodeToString(sum[:]))
	switch {
	case want.either:
		if o.status == 200 && string(o.answer) != echo {
			fail("answered 200 %.200q, want the body's sum", o.answer)
		}
	case want.ok && (o.status != 200 || string(o.answer) != echo):
		fail("answered %d %.200q, want 200 and the body's sum", o.status, o.answer)
	case !want.ok && o.status == 200:
		fail("answered 200 %.200q, want a refusal at %v", o.answer, want.stages)
	case !want.ok && len(want.stages) > 0 && !statusOfAny(o.status, want.stages):
		fail("answered %d %.200q (%v), want the status of %v", o.status, o.answer, o.err, want.stages)
	}
	if !want.ok && len(o.answer) > maxText {
		fail("a refusal answered with %d bytes", len(o.answer))
	}
	if o.held != 0 {
		fail("the budget holds %d more than before the request", o.held)
	}
	return bad
}

// statusOfAny reports whether status is the status of one of stages.
func statusOfAny(status int, stages []limits.Stage) bool {
	for _, s := range stages {
		if boundhttp.StatusOf(s) == status {
			return true
		}
	}
	return false
}

// runServer sends case c to s and returns the answer; held is what the
// budget holds beyond the case's state once the exchange ended.
func runServer(s *server, c scase) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o.panics = p
		}
	}()
	var other int64
	switch c.State {
	case "busy":
		other = s.f.Cap() / 4 // a share: every body the model sends still fits
	case "full":
		other = s.f.Cap()
	}
	// A body an earlier case abandoned (behind TimeoutHandler, its read
	// goes on after the answer) gives its charge back when it ends.
	deadline := time.Now().Add(5 * time.Second)
	for s.f.InUse() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	release, err := occupy(s.f, other)
	if err != nil {
		return outcome{panics: fmt.Sprintf("an earlier case still holds %d of the budget after 5 s", s.f.InUse())}
	}
	defer release()
	wire := c.wire()
	head := http.Header{"X-Wrap": {c.Wrap}}
	for _, l := range codings[c.Coding].lines {
		head.Add("Content-Encoding", l)
	}
	if c.Expect {
		head.Set("Expect", "100-continue")
	}
	if strings.HasPrefix(c.Proto, "h2") {
		o = sendH2(s, c, head, wire)
	} else {
		o = sendH1(s, c, head, wire)
	}
	// The Middleware gives the body's charge back when the exchange ends,
	// which the client may see a moment before.
	deadline = time.Now().Add(5 * time.Second)
	for s.f.InUse() != other && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	o.held = s.f.InUse() - other
	return o
}

// sendH1 writes the request on a connection of its own, cut where c stops
// (the client closes its side and reads what is answered).
func sendH1(s *server, c scase, head http.Header, wire []byte) outcome {
	addr := s.srv.Listener.Addr().String()
	var conn net.Conn
	var err error
	if s.proto == "h1tls" {
		conn, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: s.pool()})
	} else {
		conn, err = net.Dial("tcp", addr)
	}
	if err != nil {
		return outcome{err: err}
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var b bytes.Buffer
	b.WriteString("POST /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n")
	if c.Framing == "length" {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(wire))
	} else {
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	head.Write(&b)
	b.WriteString("\r\n")
	body := wire
	switch c.Stop {
	case "after-headers":
		body = nil
	case "mid-body":
		body = wire[:len(wire)/2]
	}
	if c.Framing == "chunked" {
		var ch bytes.Buffer
		if len(body) > 0 {
			fmt.Fprintf(&ch, "%x\r\n%s\r\n", len(body), body)
		}
		if c.Stop != "after-headers" && c.Stop != "mid-body" {
			ch.WriteString("0\r\n\r\n")
		}
		body = ch.Bytes()
	}
	b.Write(body)
	conn.Write(b.Bytes())
	if cw, ok := conn.(interface{ CloseWrite() error }); ok && (c.Stop == "after-headers" || c.Stop == "mid-body") {
		cw.CloseWrite()
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	for err == nil && resp.StatusCode == http.StatusContinue {
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		return outcome{err: err}
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return outcome{status: resp.StatusCode, answer: answer}
}

// sendH2 sends the request over HTTP/2 with net/http's client; a cut is a
// body that fails where c stops (the client resets the stream).
func sendH2(s *server, c scase, head http.Header, wire []byte) outcome {
	var body io.Reader = bytes.NewReader(wire)
	if c.Framing == "chunked" {
		body = io.MultiReader(body) // of no length net/http can see: streamed
	}
	switch c.Stop {
	case "after-headers":
		body = &failing{}
	case "mid-body":
		body = io.MultiReader(bytes.NewReader(wire[:len(wire)/2]), &failing{})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.srv.URL+"/c", body)
	req.Header = head
	if c.Framing == "length" {
		req.ContentLength = int64(len(wire))
	} else {
		req.ContentLength = -1
	}
	resp, err := s.client().Do(req)
	if err != nil {
		return outcome{err: err}
	}
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return outcome{status: resp.StatusCode, answer: answer}
}

// failing is a request body that fails: the client stops sending.
type failing struct{}

func (*failing) Read([]byte) (int, error) { return 0, errors.New("the client stops") }

// client returns an HTTP/2 client of s's protocol, made once.
func (s *server) client() *http.Client {
	s.once.Do(func() { s.hc = s.newClient() })
	return s.hc
}

func (s *server) newClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	if s.proto == "h2tls" {
		tr.Protocols.SetHTTP2(true)
		tr.TLSClientConfig = &tls.Config{RootCAs: s.pool()}
	} else {
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return &http.Client{Transport: tr}
}

func (s *server) pool() *x509.CertPool { return certPool(s.srv) }

// occupy holds n bytes of f, as other bodies would, until release.
func occupy(f *limits.InFlight, n int64) (release func(), err error) {
	h := inflight.NewHold(inflight.Of(f))
	if err := h.Grow(n); err != nil {
		return nil, err
	}
	return h.Release, nil
}
