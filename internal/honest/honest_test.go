// Package honest is a differential suite of honest traffic: every workload
// runs once through stock net/http, as the control, and then through
// boundhttp, and wherever the exchange is within the configured limits and
// stock succeeds, boundhttp must succeed too, with the same statuses,
// byte-identical bodies (compared by SHA-256), no more connections where
// the workload counts them, and within a stated time factor of stock: 4x
// plus 2 s of slack, except 3x plus 5 s for the large bodies and 1.5x plus
// 2 s for the heartbeats, which sleeps pace; both times are logged. A
// control that fails fails its test at once: the workload, not the
// library, is wrong.
//
// Stock is a clone of http.DefaultTransport on the client and the bare
// handler on the server. Ours is a boundhttp.Transport on
// boundhttp.NewBaseTransport on the client and the handler wrapped in
// boundhttp.NewMiddleware on the server. Each side is a subtest: "stock"
// is the control; "ours-client" is our Transport against the bare
// handler; "ours-whole" and "ours-stream" are our Transport against the
// handler behind a whole-body or a streaming Middleware; "+sleep" and
// "+busy" add a layer outside the Middleware that works ~200 µs after the
// inner handler returned (time.Sleep, or a busy loop), as a logging or
// metrics layer does. Workloads that concern one side only say so.
//
// Every workload runs over HTTP/1.1, HTTP/1.1 over TLS, h2c (prior
// knowledge, http.Protocols) and HTTP/2 over TLS (httptest's StartTLS),
// each a subtest, unless it says otherwise; on loopback only. The files,
// by concern:
//
//   - honest_test.go: this harness: protocols, sides, the runner, the
//     comparison
//   - keepalive_test.go: 401s without reading the request body, many over
//     one keep-alive connection (server side)
//   - uplink_test.go: an HTTP/2 upload through a slow uplink while an
//     event stream on the same connection ends early (client side, h2c
//     and HTTP/2 over TLS); sockopt_*_test.go narrow its sockets
//   - upload_test.go: large uploads and downloads
//   - frames_test.go: bodies in 1-byte DATA frames and chunks, both ways
//   - expect_test.go: Expect: 100-continue uploads
//   - redirect_test.go: 307 and 308 redirects of POST bodies
//   - fanout_test.go: many concurrent fetches to many hosts (client side)
//   - stream_test.go: long event streams with heartbeats, in real time and
//     in a testing/synctest bubble
//   - limits_test.go: the byte bounds (request and response, wire and
//     decoded, the response cap) at their limit, served as stock serves
//     them, and one byte past it, stopped
//
// Modes, and what each runs:
//
//	go test -short -race ./internal/honest   # the README's run: about 50 s
//	go test -race ./internal/honest          # CI's full sweep: about 2 minutes
//	go test ./internal/honest -honest.long -timeout 60m
//
//	workload              -short       default      -honest.long
//	keep-alive 401s       200          400          10,000 requests per side
//	slow uplink           2 MiB        3 MiB        3 MiB, at 2 Mbit/s
//	large bodies          64 MiB       320 MiB      1 GiB, each way
//	1-byte frames         16 KiB       64 KiB       256 KiB, each way
//	100-continue          8            32           200 uploads per side
//	fan-out               1            3            20 rounds of 200 GETs
//	heartbeats            3 s          5 s          2 min, real time
//	heartbeats (synctest) 1 min        10 min       2 h, synthetic time
//
// The flag goes after the package (go test treats what follows an unknown
// flag as the test binary's arguments).
package honest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

var longMode = flag.Bool("honest.long", false, "run the long workloads: 10,000 keep-alive requests, 1 GiB transfers, minutes of heartbeats")

// A mode is how much of each workload runs.
type mode int

const (
	shortMode mode = iota // -short
	fullMode              // the default
	longRun               // -honest.long
)

func currentMode() mode {
	switch {
	case *longMode:
		return longRun
	case testing.Short():
		return shortMode
	}
	return fullMode
}

// pick returns the value for the current mode.
func pick[T any](short, full, long T) T {
	switch currentMode() {
	case shortMode:
		return short
	case longRun:
		return long
	}
	return full
}

// A proto is one way of carrying HTTP.
type proto struct {
	name string
	tls  bool // TLS on the connection
	h2   bool // HTTP/2 (h2c with prior knowledge without TLS)
}

var (
	h1    = proto{"h1", false, false}
	h1tls = proto{"h1tls", true, false}
	h2c   = proto{"h2c", false, true}
	h2tls = proto{"h2tls", true, true}

	allProtos = []proto{h1, h1tls, h2c, h2tls}
	h2Protos  = []proto{h2c, h2tls}
)

// wantProto is the protocol a response over p reports (exchange.proto).
func (p proto) wantProto() string {
	s := "HTTP/1.1"
	if p.h2 {
		s = "HTTP/2.0"
	}
	if p.tls {
		s += "+tls"
	}
	return s
}

// mwMode is the Middleware around a handler, if any.
type mwMode int

const (
	noMW     mwMode = iota
	wholeMW         // NewMiddleware, whole-body mode
	streamMW        // NewMiddleware, Streaming
)

// outerMode is the layer outside the Middleware, if any: it works for
// outerWork after the inner handler returned, as a logging or metrics
// layer does.
type outerMode int

const (
	noOuter    outerMode = iota
	sleepOuter           // time.Sleep(outerWork)
	busyOuter            // a busy loop of outerWork
)

const outerWork = 200 * time.Microsecond

// A side is one stack a workload runs through.
type side struct {
	name  string
	ours  bool // the client is a boundhttp.Transport on NewBaseTransport
	mw    mwMode
	outer outerMode
}

// stock is the control: net/http alone on both ends.
var stock = side{name: "stock"}

// ours returns the side with our Transport on the client and the handler
// behind mw and outer.
func ours(mw mwMode, outer outerMode) side {
	name := "ours-client"
	switch mw {
	case wholeMW:
		name = "ours-whole"
	case streamMW:
		name = "ours-stream"
	}
	switch outer {
	case sleepOuter:
		name += "+sleep"
	case busyOuter:
		name += "+busy"
	}
	return side{name: name, ours: true, mw: mw, outer: outer}
}

var (
	// clientOnly is our Transport against the bare handler.
	clientOnly = []side{ours(noMW, noOuter)}
	// bothModes is our Transport against both Middleware modes.
	bothModes = []side{ours(wholeMW, noOuter), ours(streamMW, noOuter)}
	// everySide is our Transport against the bare handler and against
	// both Middleware modes, with and without each outer layer.
	everySide = []side{
		ours(noMW, noOuter),
		ours(wholeMW, noOuter), ours(wholeMW, sleepOuter), ours(wholeMW, busyOuter),
		ours(streamMW, noOuter), ours(streamMW, sleepOuter), ours(streamMW, busyOuter),
	}
)

// An exchange is what one request of a workload came to, as the client
// saw it. Two runs agree when their exchanges are equal one by one.
type exchange struct {
	status int
	proto  string // resp.Proto, "+tls" when over TLS
	n      int64  // body bytes the client read
	sum    string // SHA-256 of those bytes, hex
	head   string // the body, when it is short text (for messages)
	extra  string // what else the workload compares (a final URL, a count)
	err    string // why the exchange failed, "" if it did not
}

func (x exchange) String() string {
	s := fmt.Sprintf("%d %s %d bytes sha256 %.16s", x.status, x.proto, x.n, x.sum)
	if x.head != "" {
		s += fmt.Sprintf(" %q", x.head)
	}
	if x.extra != "" {
		s += " [" + x.extra + "]"
	}
	if x.err != "" {
		s += " error: " + x.err
	}
	return s
}

// An outcome is one run of a workload over one protocol through one side.
type outcome struct {
	ex      []exchange
	err     error         // the run could not complete
	conns   int32         // connections the server accepted
	elapsed time.Duration // the client's part, set by the runner unless the run sets it
	notes   []string      // logged, not compared
}

// A workload is one kind of honest traffic.
type workload struct {
	protos []proto
	sides  []side // besides the control

	// concurrent runs the protocols at once: for workloads paced by sleeps
	// and throttles rather than by the CPU.
	concurrent bool
	factor     float64       // ours may take factor times stock, plus slack; 0 means 4
	slack      time.Duration // 0 means 2 s
	deadline   time.Duration // bounds one run; 0 means 2 minutes (30 in long mode)
	checkConns bool          // ours must use no more connections than stock
	signal     bool          // the server signals env.served when a handler (with its outer layer) returned

	serverBudget  limits.Budget // the Middleware's
	clientBudget  limits.Budget // our Transport's
	streaming     bool          // our Transport's Streaming
	headerTimeout time.Duration // our Transport's HeaderTimeout; 0 means its default

	tuneBase func(base *http.Transport)          // on the base of either side, after the protocol is set
	listen   func(t *testing.T) net.Listener     // the server's listener; nil means httptest's
	setup    func(p proto, srv *httptest.Server) // before the server starts

	// pass returns the bare handler of one run and the client's part of
	// it, with fresh state.
	pass func(p proto) (http.Handler, func(e *env) outcome)
}

// An env is what the client's part of a run works with.
type env struct {
	t      *testing.T
	ctx    context.Context // done at the run's deadline
	p      proto
	side   side
	url    string
	srv    *httptest.Server
	conns  *atomic.Int32 // connections the server accepted so far
	served chan struct{} // a handler returned, with workload.signal
	base   *http.Transport
	rt     http.RoundTripper // base, or our Transport on it
	client *http.Client
}

// run runs w over each of its protocols: the control first, then each
// side, each compared with the control.
func (w workload) run(t *testing.T) {
	t.Helper()
	var wg sync.WaitGroup
	for _, p := range w.protos {
		f := func(t *testing.T) { w.runProto(t, p) }
		if w.concurrent {
			// t.Run from goroutines: unlike t.Parallel, not limited by
			// -parallel (GOMAXPROCS), so that slow, idle runs overlap.
			wg.Go(func() { t.Run(p.name, f) })
			continue
		}
		t.Run(p.name, f)
	}
	wg.Wait()
}

func (w workload) runProto(t *testing.T, p proto) {
	var ctrl outcome
	if !t.Run(stock.name, func(t *testing.T) {
		ctrl = w.runSide(t, p, stock)
		t.Logf("stock: %v", ctrl.elapsed)
		if msg := ctrl.failure(p); msg != "" {
			t.Fatalf("the control (stock net/http) failed, so the workload is wrong, not the library: %s", msg)
		}
	}) {
		return
	}
	for _, s := range w.sides {
		t.Run(s.name, func(t *testing.T) {
			got := w.runSide(t, p, s)
			w.compare(t, ctrl, got)
		})
	}
}

// failure describes what went wrong in a run of the control, or "".
func (o outcome) failure(p proto) string {
	if o.err != nil {
		return o.err.Error()
	}
	for i, x := range o.ex {
		if x.err != "" {
			return fmt.Sprintf("exchange #%d: %v", i, x)
		}
		if x.proto != "" && x.proto != p.wantProto() {
			return fmt.Sprintf("exchange #%d went over %s, want %s", i, x.proto, p.wantProto())
		}
	}
	if len(o.ex) == 0 {
		return "no exchanges"
	}
	return ""
}

// runSide runs the workload once over p through s.
func (w workload) runSide(t *testing.T, p proto, s side) outcome {
	t.Helper()
	deadline := w.deadline
	if deadline == 0 {
		deadline = pick(2*time.Minute, 2*time.Minute, 30*time.Minute)
	}
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()

	handler, client := w.pass(p)
	handler = w.serverHandler(t, s, handler)
	served := make(chan struct{}, 64)
	if w.signal {
		inner := handler
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(w, r)
			select {
			case served <- struct{}{}:
			default: // the client waits for each: never full
			}
		})
	}
	srv := httptest.NewUnstartedServer(handler)
	if w.listen != nil {
		srv.Listener.Close()
		srv.Listener = w.listen(t)
	}
	var conns atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	if w.setup != nil {
		w.setup(p, srv)
	}
	startServer(p, srv)
	defer srv.Close()

	base := baseTransport(s.ours, p, srv.Certificate())
	if w.tuneBase != nil {
		w.tuneBase(base)
	}
	defer base.CloseIdleConnections()
	var rt http.RoundTripper = base
	if s.ours {
		rt = &boundhttp.Transport{Base: base, Budget: w.clientBudget, Streaming: w.streaming, HeaderTimeout: w.headerTimeout}
	}
	e := &env{t: t, ctx: ctx, p: p, side: s, url: srv.URL, srv: srv, conns: &conns, served: served,
		base: base, rt: rt, client: &http.Client{Transport: rt}}
	start := time.Now()
	o := client(e)
	if o.elapsed == 0 {
		o.elapsed = time.Since(start)
	}
	if o.err == nil && ctx.Err() != nil {
		o.err = fmt.Errorf("the run passed its deadline of %v", deadline)
	}
	o.conns = conns.Load()
	for _, n := range o.notes {
		t.Logf("%s: %s", s.name, n)
	}
	return o
}

// serverHandler wraps h as side s serves it.
func (w workload) serverHandler(t *testing.T, s side, h http.Handler) http.Handler {
	t.Helper()
	if s.mw != noMW {
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: w.serverBudget, Streaming: s.mw == streamMW})
		if err != nil {
			t.Fatal(err)
		}
		h = mw(h)
	}
	return withOuter(s.outer, h)
}

// withOuter returns h behind an outer layer that works for outerWork after
// h returned, as a logging or metrics layer does.
func withOuter(o outerMode, h http.Handler) http.Handler {
	switch o {
	case sleepOuter:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			time.Sleep(outerWork)
		})
	case busyOuter:
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			for start := time.Now(); time.Since(start) < outerWork; {
			}
		})
	}
	return h
}

// startServer starts srv speaking p.
func startServer(p proto, srv *httptest.Server) {
	switch {
	case p.tls:
		srv.EnableHTTP2 = p.h2
		srv.StartTLS()
	case p.h2:
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
	default:
		srv.Start()
	}
}

// baseTransport returns the client's base transport for p: for our side
// one from NewBaseTransport, else a clone of http.DefaultTransport; TLS
// trusts cert.
func baseTransport(ours bool, p proto, cert *x509.Certificate) *http.Transport {
	var tr *http.Transport
	if ours {
		tr = boundhttp.NewBaseTransport()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	speak(tr, p, cert)
	return tr
}

// speak makes tr speak p only; TLS trusts cert.
func speak(tr *http.Transport, p proto, cert *x509.Certificate) {
	tr.Protocols = new(http.Protocols)
	switch {
	case p.h2 && p.tls:
		tr.Protocols.SetHTTP2(true)
	case p.h2:
		tr.Protocols.SetUnencryptedHTTP2(true)
	default:
		tr.Protocols.SetHTTP1(true)
	}
	if p.tls {
		pool := x509.NewCertPool()
		pool.AddCert(cert)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
}

// compare fails t where got, a run of ours, falls short of ctrl, the
// control's run.
func (w workload) compare(t *testing.T, ctrl, got outcome) {
	t.Helper()
	factor, slack := w.factor, w.slack
	if factor == 0 {
		factor = 4
	}
	if slack == 0 {
		slack = 2 * time.Second
	}
	limit := time.Duration(factor*float64(ctrl.elapsed)) + slack
	t.Logf("stock %v, ours %v (limit %v = %gx stock + %v); connections: stock %d, ours %d", ctrl.elapsed.Round(time.Millisecond),
		got.elapsed.Round(time.Millisecond), limit.Round(time.Millisecond), factor, slack, ctrl.conns, got.conns)
	if got.err != nil {
		t.Errorf("ours failed where stock succeeded: %v", got.err)
	}
	if len(got.ex) != len(ctrl.ex) {
		t.Errorf("ours made %d exchanges, stock %d", len(got.ex), len(ctrl.ex))
	}
	var differ, first int
	errs := map[string]int{}
	for i := range min(len(got.ex), len(ctrl.ex)) {
		if got.ex[i] == ctrl.ex[i] {
			continue
		}
		if differ == 0 {
			first = i
		}
		differ++
		if e := got.ex[i].err; e != "" {
			errs[e]++
		} else {
			errs[fmt.Sprintf("status %d (stock %d)", got.ex[i].status, ctrl.ex[i].status)]++
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d exchanges differ from stock; first #%d:\n\tours:  %v\n\tstock: %v%s",
			differ, len(ctrl.ex), first, got.ex[first], ctrl.ex[first], tally(errs))
	}
	if w.checkConns && got.conns > ctrl.conns {
		t.Errorf("ours used %d connections, stock %d", got.conns, ctrl.conns)
	}
	if got.elapsed > limit {
		t.Errorf("ours took %v, stock %v: over the limit of %v", got.elapsed, ctrl.elapsed, limit)
	}
}

// tally lists the distinct failures, most frequent first.
func tally(errs map[string]int) string {
	if len(errs) < 2 {
		return ""
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return errs[b] - errs[a] })
	var b strings.Builder
	b.WriteString("\n\tdistinct failures:")
	for i, k := range keys {
		if i == 5 {
			fmt.Fprintf(&b, "\n\t\t... and %d more", len(keys)-i)
			break
		}
		fmt.Fprintf(&b, "\n\t\t%d x %s", errs[k], k)
	}
	return b.String()
}

// waitServed waits until a handler returned (see workload.signal).
func (e *env) waitServed() error {
	select {
	case <-e.served:
		return nil
	case <-e.ctx.Done():
		return fmt.Errorf("waiting for the handler to return: %w", e.ctx.Err())
	}
}

// do sends req and reads the whole answer.
func (e *env) do(req *http.Request) exchange {
	resp, err := e.client.Do(req)
	if err != nil {
		return exchange{err: e.clean(err.Error())}
	}
	defer resp.Body.Close()
	return readAnswer(resp, e.clean)
}

// readAnswer reads resp's body whole into an exchange; clean takes the
// run's URL out of error texts.
func readAnswer(resp *http.Response, clean func(string) string) exchange {
	h := sha256.New()
	var head limitedBuffer
	n, err := io.Copy(io.MultiWriter(h, &head), resp.Body)
	x := exchange{status: resp.StatusCode, proto: protoOf(resp), n: n, sum: hex.EncodeToString(h.Sum(nil))}
	if n <= maxHead {
		x.head = head.String()
	}
	if err != nil {
		x.err = "reading the body: " + clean(err.Error())
	}
	return x
}

// maxHead is the longest body an exchange quotes.
const maxHead = 160

// limitedBuffer keeps the first maxHead bytes written to it.
type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxHead - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// clean replaces the run's URL in s, so that texts of different runs
// compare.
func (e *env) clean(s string) string { return strings.ReplaceAll(s, e.url, "URL") }

// protoOf names the protocol resp came over.
func protoOf(resp *http.Response) string {
	if resp.TLS != nil {
		return resp.Proto + "+tls"
	}
	return resp.Proto
}

// sumOf returns the SHA-256 of b in hex.
func sumOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// hashAnswer is the body of a handler that read a request body of n bytes
// whose SHA-256 is sum, or failed with err.
func hashAnswer(w http.ResponseWriter, r *http.Request) {
	h := sha256.New()
	n, err := io.Copy(h, r.Body)
	if err != nil {
		http.Error(w, fmt.Sprintf("reading the body after %d bytes: %v", n, err), http.StatusInternalServerError)
		return
	}
	fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
}

// payload returns n deterministic, incompressible bytes: the stream seed
// names, read from a ChaCha8 generator.
func payload(seed uint64, n int64) io.Reader {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	return io.LimitReader(mrand.NewChaCha8(s), n)
}

var payloadSums sync.Map // [2]int64{seed, n} -> string

// payloadSum returns the SHA-256, hex, of payload(seed, n), computed once.
func payloadSum(seed uint64, n int64) string {
	key := [2]int64{int64(seed), n}
	if v, ok := payloadSums.Load(key); ok {
		return v.(string)
	}
	h := sha256.New()
	io.Copy(h, payload(seed, n))
	s := hex.EncodeToString(h.Sum(nil))
	payloadSums.Store(key, s)
	return s
}

// text returns n bytes of deterministic JSON-like text, moderately
// compressible, different for each seed.
func text(seed, n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"host":%d,"name":"item %d","tags":["alpha","beta"],"ok":true}`+"\n", i, seed, (i*7919+seed)%10007)
	}
	return b.Bytes()[:n]
}

// oneByteReader returns its source one byte per Read.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// selfSigned returns a certificate for 127.0.0.1 and honest.test, and its
// leaf. It is valid from 1990, so that it is valid in a testing/synctest
// bubble (whose clock starts in 2000) too.
func selfSigned(t testing.TB) (tls.Certificate, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "honest.test"},
		NotBefore:             time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              now.Add(48 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"honest.test"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, leaf
}
