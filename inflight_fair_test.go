package boundhttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHeaderOnlyConnectionsHoldNoBudget pins the trap of a reservation made
// when a body's headers arrive: each gzip request reserved MaxDecodedBytes
// plus its decoder (about 4.2 MiB) before its first byte, so 69 connections
// that sent 7 KB of headers and no body filled the default 256 MiB budget,
// and every honest upload got 503 for as long as they stayed. Now a body
// holds nothing before its first byte: connections that send headers
// alone (gzip, deflate, chunked identity and identity with a length) leave
// the budget empty, and an honest 41-byte upload, and a gzip one, pass.
// Sabotage: charging the gzip decoder at the first Read (before its first
// byte), as it was, answers the honest uploads 503.
func TestHeaderOnlyConnectionsHoldNoBudget(t *testing.T) {
	t.Parallel()
	f := limits.NewInFlight(16 << 20)
	entered := make(chan struct{}, 64)
	mw := mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{}, InFlight: f})
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "ok")
	}))
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Attack") != "" {
			entered <- struct{}{}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	addr := s.Listener.Addr().String()
	heads := []string{
		"Content-Encoding: gzip\r\nContent-Length: 1000000\r\n",
		"Content-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n",
		"Transfer-Encoding: chunked\r\n",
		"Content-Length: 60000\r\n",
	}
	var conns []net.Conn
	for i := range 16 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nX-Attack: 1\r\n%s\r\n", heads[i%len(heads)])
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range conns {
		<-entered // each is in the Middleware, waiting for its first body byte
	}
	for _, tc := range []struct {
		coding string
		body   []byte
	}{
		{"", []byte(`{"query":"an honest upload of 41 bytes"}`)},
		{"gzip", testenc.Encode("gzip", []byte(`{"query":"an honest gzip upload"}`))},
	} {
		req, _ := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(tc.body))
		if tc.coding != "" {
			req.Header.Set("Content-Encoding", tc.coding)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("honest %q upload beside 16 header-only connections: %d %q (Retry-After %q), InUse %d; want 200",
				tc.coding, resp.StatusCode, got, resp.Header.Get("Retry-After"), f.InUse())
		}
	}
	if got := f.InUse(); got != 0 {
		t.Errorf("16 connections that sent headers alone hold %d bytes, want 0", got)
	}
}

// listenAt listens on a port of the loopback address ip, or skips the test
// where the system has no such address.
func listenAt(t *testing.T, ip string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("no loopback address %s: %v", ip, err)
	}
	return ln
}

// localDialer dials from the loopback address ip, so that a test has
// clients at several addresses.
func localDialer(ip string) *http.Transport {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Transport{DialContext: d.DialContext}
}

// TestLargeUploadLeavesOtherClientsAShare pins the trap of one body taking
// the whole budget: a chunked upload on a route whose budget was raised to
// the whole in-flight budget took all of it after 1 KiB, and a 7-byte POST
// to another route got 503. A client may now hold its share (a quarter)
// and more only while a share stays free: the upload holds at most three
// quarters, and another client's small POST passes while it stalls. The
// busy answer's Retry-After comes from the budget's state: nothing was
// given back in the last second, so a minute. Sabotage: without the share
// rule (share = capacity) the small POST gets 503.
func TestLargeUploadLeavesOtherClientsAShare(t *testing.T) {
	t.Parallel()
	if ln, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		t.Skipf("no second loopback address: %v", err)
	} else {
		ln.Close()
	}
	const capacity = 32 << 20
	f := limits.NewInFlight(capacity)
	big := limits.Budget{MaxWireBytes: capacity, MaxDecodedBytes: capacity}
	mux := http.NewServeMux()
	mux.Handle("/upload", mustMW(t, boundhttp.MiddlewareConfig{Budget: big, InFlight: f})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "stored")
	})))
	mux.Handle("/small", mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{}, InFlight: f})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	})))
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)

	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	uploader := localDialer("127.0.0.1")
	t.Cleanup(uploader.CloseIdleConnections)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/upload", pr) // chunked: no length
		if resp, err := uploader.RoundTrip(req); err == nil {
			resp.Body.Close()
		}
	}()
	pw.Write(bytes.Repeat([]byte("x"), 1024))
	deadline := time.Now().Add(10 * time.Second)
	for f.InUse() == 0 && time.Now().Before(deadline) { // the upload's first byte came and was charged
		time.Sleep(time.Millisecond)
	}
	if held, most := f.InUse(), int64(capacity-f.Share()); held == 0 || held > most {
		t.Fatalf("the upload holds %d, want some and at most %d (all but a share)", held, most)
	}

	// The uploader's own second request: its address is past its share,
	// and too little is free: 503, told to come back when the stalled
	// upload's room frees (nothing was given back yet: a minute).
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/small", strings.NewReader("7 bytes"))
	resp, err := localDialer("127.0.0.1").RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusServiceUnavailable || ra != 60 {
		t.Errorf("the greedy client's second POST: %d, Retry-After %q; want 503 and 60", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	other := localDialer("127.0.0.2")
	t.Cleanup(other.CloseIdleConnections)
	req, _ = http.NewRequest(http.MethodPost, s.URL+"/small", strings.NewReader("7 bytes"))
	resp, err = other.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("another client's 7-byte POST beside the stalled upload: %d %q, want 200", resp.StatusCode, got)
	}
}

// TestStalledBrotliBodiesOfOneHostLeaveOthersRoom pins the trap of one host
// taking the client's budget: an agent that opened ten links of one hostile
// page got, from each, 16 bytes of a brotli stream declaring a 16 MiB window
// and then nothing; each body was charged 27.5 MiB and more, 252.5 of the
// 256 MiB budget for 160 bytes, and an honest gzip fetch to another host
// failed with stage inflight at its deadline. A host may now hold its share
// and more only while a share stays free, whatever names it is reached
// by (its address is a peer too): the fetch to the other host passes.
// Sabotage: without the share rule the honest fetch fails busy; keyed by
// the URL's host as written, the five spellings of the hostile host take
// the budget.
func TestStalledBrotliBodiesOfOneHostLeaveOthersRoom(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "br")
		w.Write(brotliStall())
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hostile.Close)
	page := bytes.Repeat([]byte("an honest page of text. "), 500) // 12 KB
	honest := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(testenc.Encode("gzip", page))
	}))
	honest.Listener.Close()
	honest.Listener = listenAt(t, "127.0.0.2") // another host is another address
	honest.Start()
	t.Cleanup(honest.Close)

	f := limits.NewInFlight(128 << 20)
	tr := &boundhttp.Transport{InFlight: f}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	// One server, named five ways: one peer (its address), whatever the
	// spelling.
	port := hostile.Listener.Addr().(*net.TCPAddr).Port
	names := []string{"127.0.0.1", "localhost", "LOCALHOST", "Localhost.", "localHost"}
	for i := range 10 {
		wg.Go(func() {
			url := fmt.Sprintf("http://%s:%d/", names[i%len(names)], port)
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	// The hostile bodies are charged (three of them at least, 27.5 MiB of
	// decoder state each), and no more come in.
	deadline := time.Now().Add(10 * time.Second)
	for f.InUse() < 80<<20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for held := f.InUse(); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		if f.InUse() == held {
			break
		}
		held = f.InUse()
	}
	held := f.InUse()
	hctx, hcancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer hcancel()
	req, _ := http.NewRequestWithContext(hctx, http.MethodGet, honest.URL, nil)
	resp, err := client.Do(req)
	if err != nil {
		var e *limits.Error
		errors.As(err, &e)
		t.Fatalf("honest fetch beside ten stalled brotli bodies of another host (holding %d of %d): %v", held, f.Cap(), err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(got, page) {
		t.Errorf("honest fetch: %d bytes, %v", len(got), err)
	}
	if most := f.Cap() - f.Share(); held > most {
		t.Errorf("the hostile host holds %d, more than all but a share (%d)", held, most)
	}
	t.Logf("the hostile host holds %d of %d; share %d", held, f.Cap(), f.Share())
	cancel()
}

// TestClientsBehindAProxyToldApartByPeer pins the cost of the address
// share behind a proxy: every client has the proxy's address, so seven
// slow uploads in progress, each on a connection of its own and far enough
// to have earned its bound (40 KiB of gzip), could use all but a share
// together, and the sixth and seventh got 503 with 7 MiB idle.
// MiddlewareConfig.Peer names the client the proxy forwards: each is a
// peer of its own, and all seven fit. Sabotage: without Peer, two are
// refused.
func TestClientsBehindAProxyToldApartByPeer(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{3}).Read(data)
	start := chunked(testenc.Encode("gzip", data)[:40<<10]) // past 1/128 of its 4 MiB bound
	for _, named := range []bool{false, true} {
		f := limits.NewInFlight(32 << 20)
		cfg := boundhttp.MiddlewareConfig{InFlight: f}
		if named {
			cfg.Peer = func(r *http.Request) string { return r.Header.Get("X-Forwarded-For") }
		}
		s := httptest.NewServer(mustMW(t, cfg)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
		})))
		var conns []net.Conn
		refused := 0
		for i := range 7 {
			c, err := net.Dial("tcp", s.Listener.Addr().String()) // the proxy's connection for client i
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			// A slow client's gzip upload, in progress: its first bytes came.
			fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.%d\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n", i+1)
			c.Write(start)
			deadline := time.Now().Add(30 * time.Second)                        // bounds a failure only
			for f.InUse() < int64(i+1)*(4<<20) && time.Now().Before(deadline) { // charged, or refused
				c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
				var b [12]byte
				if n, _ := io.ReadFull(c, b[:]); n > 0 {
					refused++
					break
				}
			}
		}
		if want := map[bool]int{false: 2, true: 0}[named]; refused != want {
			t.Errorf("Peer set %v: %d of 7 uploads through one proxy refused (%d of %d in use), want %d", named, refused, f.InUse(), f.Cap(), want)
		}
		for _, c := range conns {
			c.Close()
		}
		s.Close()
	}
}
