package boundhttp_test

import (
	"bufio"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
	"github.com/klauspost/compress/zstd"
)

// fastEncode is encode with a fast zstd level (checksums on): testenc's zstd
// writer compresses hardest, which takes a second per body under -race.
func fastEncode(c string, data []byte) []byte {
	if c != "zstd" {
		return encode(c, data)
	}
	fastZstd.once.Do(func() {
		fastZstd.w, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(true))
	})
	return fastZstd.w.EncodeAll(data, nil)
}

var fastZstd struct {
	once sync.Once
	w    *zstd.Encoder
}

// letterHandler answers ?c=CODING&n=N with N bytes of one letter, chosen
// per request and named in the X-Letter header, encoded with the coding
// and flushed in pieces; with &redirect=1 as a 302 (a body http.Client
// hands over only when CheckRedirect keeps it). Distinct letters let a
// test tell one response's bytes from another's.
func letterHandler(l *letters) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		letter := l.next()
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		c := r.URL.Query().Get("c")
		status := http.StatusOK
		if r.URL.Query().Get("redirect") != "" {
			w.Header().Set("Location", "/elsewhere")
			status = http.StatusFound
		}
		w.Header().Set("X-Letter", string(letter))
		serve(w, body{coding: c, data: l.encoded(c, letter, n), chunked: true, status: status})
	})
}

// letters hands out one letter per response, in turn, and caches the
// encodings of runs of them. It is safe for concurrent use.
type letters struct {
	seq   atomic.Int32
	cache sync.Map // encodings by coding, letter and size
}

// next returns the letter of the next response.
func (l *letters) next() byte { return byte('a' + l.seq.Add(1)%5) }

// encoded returns n bytes of letter encoded with coding c.
func (l *letters) encoded(c string, letter byte, n int) []byte {
	key := fmt.Sprint(c, letter, n)
	if v, ok := l.cache.Load(key); ok {
		return v.([]byte)
	}
	v, _ := l.cache.LoadOrStore(key, fastEncode(c, bytes.Repeat([]byte{letter}, n)))
	return v.([]byte)
}

// readWhileClosing reads resp.Body (every fourth round with io.Copy, which
// takes WriteTo where the body has one, when withCopy is set) while, every
// other round, Close comes from this goroutine after a random pause of up
// to maxPause. It reports the bytes read, those that were not the
// response's letter (X-Letter), and the error that ended the read (io.EOF
// for a clean end). resp.Body is closed when it returns.
func readWhileClosing(resp *http.Response, round int, withCopy bool, maxPause time.Duration) (letter byte, read, foreign int, rerr error) {
	letter = resp.Header.Get("X-Letter")[0]
	done := make(chan struct{})
	go func() {
		defer close(done)
		if withCopy && round%4 == 1 {
			lw := &letterWriter{letter: letter}
			_, rerr = io.Copy(lw, resp.Body)
			if rerr == nil {
				rerr = io.EOF
			}
			read, foreign = lw.n, lw.foreign
			return
		}
		read, foreign, rerr = readUntilError(resp.Body, letter)
	}()
	time.Sleep(time.Duration(rand.Int64N(int64(maxPause))))
	if round%2 == 0 {
		resp.Body.Close()
	}
	<-done
	resp.Body.Close()
	return letter, read, foreign, rerr
}

// readUntilError reads body in small pieces and reports the bytes that were
// not the expected letter, and the error that ended the reads.
func readUntilError(body io.Reader, letter byte) (read, foreign int, err error) {
	buf := make([]byte, 700)
	for i := 0; i < 1<<20; i++ { // bounded: every body here is far smaller
		n, err := body.Read(buf)
		read += n
		for _, c := range buf[:n] {
			if c != letter {
				foreign++
			}
		}
		if err != nil {
			return read, foreign, err
		}
	}
	return read, foreign, errors.New("too many reads")
}

// readToError reads r into buf until a Read fails and returns that error,
// or nil after 1<<20 Reads (every body here ends far sooner).
func readToError(r io.Reader, buf []byte) error {
	for range 1 << 20 {
		if _, err := r.Read(buf); err != nil {
			return err
		}
	}
	return nil
}

// letterWriter counts the bytes written to it that are not letter.
type letterWriter struct {
	letter     byte
	n, foreign int
}

func (w *letterWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	for _, c := range p {
		if c != w.letter {
			w.foreign++
		}
	}
	return len(p), nil
}

// TestCloseDuringRead pins the trap "a body's state handed back to a pool
// while a Read still runs": Close from another goroutine, at random points
// of a Read (and of a WriteTo, through io.Copy, where the case says so), for
// every coding, many bodies at once:
//   - pooled state: HTTP/1.1, streaming (decoder and bufio.Reader pooled)
//     and whole-body (chunks pooled);
//   - HTTP/2, where Close resets one stream of a shared connection;
//   - kept redirect: a 302 returned to a caller whose CheckRedirect answers
//     http.ErrUseLastResponse, verified whole on its first Read (decoder,
//     then pooled chunks).
//
// The Read in progress must end with an error or its own bytes, never
// another response's bytes, a panic or (under -race) a data race; the next
// responses, which reuse the pooled state and the connection, must be
// byte-exact.
func TestCloseDuringRead(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name          string
		h2, redirect  bool
		modes         []bool // streaming or not
		rounds, short int
		withCopy      bool
		maxPause      time.Duration
		wantStatus    int
	}{
		{name: "pooled state", modes: []bool{false, true}, rounds: 30, short: 8, withCopy: true, maxPause: 400 * time.Microsecond, wantStatus: http.StatusOK},
		{name: "HTTP2", h2: true, modes: []bool{false, true}, rounds: 16, short: 6, maxPause: 400 * time.Microsecond, wantStatus: http.StatusOK},
		{name: "kept redirect", redirect: true, modes: []bool{false}, rounds: 24, short: 8, withCopy: true, maxPause: 600 * time.Microsecond, wantStatus: http.StatusFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var l letters
			s := httptest.NewUnstartedServer(letterHandler(&l))
			if tt.h2 {
				s.EnableHTTP2 = true
				s.StartTLS()
			} else {
				s.Start()
			}
			defer s.Close()
			tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
			if tt.h2 {
				tr.Base = s.Client().Transport // trusts the test certificate
			}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			rounds := tt.rounds
			if testing.Short() {
				rounds = tt.short
			}
			const size = 100000
			url := fmt.Sprintf("%s/?n=%d", s.URL, size)
			if tt.redirect {
				url += "&redirect=1"
			}
			var wg sync.WaitGroup
			for _, c := range codings {
				for _, streaming := range tt.modes {
					wg.Go(func() {
						for i := range rounds {
							req, _ := http.NewRequest("GET", url+"&c="+c, nil)
							if streaming {
								req = req.WithContext(boundhttp.WithStreaming(req.Context()))
							}
							resp, err := client.Do(req)
							if err != nil {
								t.Errorf("%s streaming %v: %v", c, streaming, err)
								return
							}
							if resp.StatusCode != tt.wantStatus {
								t.Errorf("%s: status %d, want %d", c, resp.StatusCode, tt.wantStatus)
							}
							if tt.h2 && resp.ProtoMajor != 2 {
								t.Errorf("proto %s; want HTTP/2", resp.Proto)
							}
							letter, read, foreign, rerr := readWhileClosing(resp, i, tt.withCopy, tt.maxPause)
							if foreign > 0 || read > size || (rerr == io.EOF && read != size) {
								t.Errorf("%s streaming %v round %d: read %d bytes, %d not %q, then %v", c, streaming, i, read, foreign, letter, rerr)
							}
						}
					})
				}
			}
			wg.Wait()
		})
	}
}

// TestCloseAbortsBlockedRead: a Read blocked on a server that stopped
// sending returns an error soon after Close from another goroutine, in
// streaming mode and for a redirect's lazily verified body.
func TestCloseAbortsBlockedRead(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(http.StatusFound)
		}
		w.Write(encode("gzip", text(1000))[:100])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer s.Close()
	defer close(release)
	tr := &boundhttp.Transport{Streaming: false}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/stream", "/redirect"} {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		if path == "/stream" {
			req = req.WithContext(boundhttp.WithStreaming(req.Context()))
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(resp.Body)
			done <- err
		}()
		time.Sleep(50 * time.Millisecond)
		resp.Body.Close()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("GET %s: the aborted Read returned no error", path)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("GET %s: Read still blocked 10 s after Close", path)
		}
		if _, err := resp.Body.Read(make([]byte, 1)); err == nil {
			t.Errorf("GET %s: Read after Close = nil error", path)
		}
	}
}

// TestTransportCloseDuringBlockedRead: a caller that closes a streaming
// response body from another goroutine while its Read waits for the
// server (the usual way to abort a download) must not have the body's
// pooled decoder state handed back under that Read: the decoders return
// to their pools only after the Read has returned (run with -race to see
// the difference).
func TestTransportCloseDuringBlockedRead(t *testing.T) {
	t.Parallel()
	raw := make([]byte, 200000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte('a' + rng.IntN(26))
	}
	data := encode("gzip", raw)
	proceed := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		select {
		case <-proceed:
		case <-time.After(5 * time.Second):
		}
		w.Write(data[len(data)/2:])
	}))
	t.Cleanup(s.Close)
	defer close(proceed)
	tr := &boundhttp.Transport{Budget: limits.Budget{}, Streaming: true}
	resp, err := (&http.Client{Transport: tr}).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 512)
		_, err := resp.Body.Read(buf)
		close(first)
		if err == nil {
			err = readToError(resp.Body, buf)
		}
		done <- err
	}()
	<-first
	time.Sleep(100 * time.Millisecond) // the next Read waits for the server
	if err := resp.Body.Close(); err != nil {
		t.Errorf("Close during a blocked Read: %v", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("Read after Close from another goroutine: no error")
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Close did not end the blocked Read")
	}
}

// TestTransportStressConcurrentClose runs good, truncated, corrupt and bomb
// bodies (gzip, zstd, br), whole and streamed, through one Transport from
// many goroutines, while other goroutines Close some bodies in the middle of
// their reads. Every innocent response (a good body nobody closed early)
// must arrive byte-exact; every body closed early must have yielded only a
// prefix of its own bytes; hostile bodies must fail. Run it under -race:
// pooled decoders, bufio.Readers and chunks are shared across all of them.
// 2,000 requests (300 with -short).
func TestTransportStressConcurrentClose(t *testing.T) {
	requests, workers := 2000, 16
	if testing.Short() {
		requests = 300
	}
	const variants = 8
	const limit = 64 << 10
	type bodies struct{ good, truncated, corrupt [variants][]byte }
	wire := map[string]*bodies{}
	plain := [variants][]byte{}
	for v := range variants {
		plain[v] = append([]byte(fmt.Sprintf("variant %d|", v)), text(8000+v*1500)...)
	}
	bombs := map[string][]byte{}
	stressCodings := []string{"gzip", "zstd", "br"}
	encode := fastEncode
	for _, c := range stressCodings {
		b := &bodies{}
		for v := range variants {
			g := encode(c, plain[v])
			b.good[v] = g
			b.truncated[v] = g[:len(g)*2/3]
			bad := bytes.Clone(g)
			for i := len(bad) - 4; i < len(bad); i++ {
				bad[i] ^= 0x5a // the checksum (gzip, zstd) or the last block (br)
			}
			b.corrupt[v] = bad
		}
		wire[c] = b
		bombs[c] = encode(c, make([]byte, 512<<10)) // 8 times the budget
	}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c, kind string
		var v int
		var chunked bool
		fmt.Sscanf(r.URL.Query().Get("b"), "%s %s %d %t", &c, &kind, &v, &chunked)
		var data []byte
		switch kind {
		case "good":
			data = wire[c].good[v]
		case "truncated":
			data = wire[c].truncated[v]
		case "corrupt":
			data = wire[c].corrupt[v]
		case "bomb":
			data = bombs[c]
		}
		serve(w, body{coding: c, data: data, chunked: chunked})
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: limit}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var next, innocent, closedEarly, rejected atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 8))
			for {
				i := next.Add(1) - 1
				if i >= int64(requests) || t.Failed() {
					return
				}
				c := stressCodings[i%3]
				v := int(i/3) % variants
				kind := []string{"good", "good", "good", "good", "truncated", "corrupt", "bomb", "truncated", "good", "bomb"}[(i/7)%10]
				streaming := i%2 == 1
				closeEarly := rng.IntN(4) == 0
				desc := fmt.Sprintf("request %d: %s %s variant %d, streaming %v, closed early %v", i, c, kind, v, streaming, closeEarly)
				ctx := context.Background()
				if streaming {
					ctx = boundhttp.WithStreaming(ctx)
				}
				req, _ := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/?b=%s+%s+%d+%t", s.URL, c, kind, v, i%5 < 2), nil)
				resp, err := client.Do(req)
				var got []byte
				if err == nil {
					done := make(chan struct{})
					if closeEarly {
						delay := time.Duration(rng.IntN(300)) * time.Microsecond
						go func() {
							defer close(done)
							time.Sleep(delay)
							resp.Body.Close()
						}()
					} else {
						close(done)
					}
					buf := make([]byte, 512)
					for range 1 << 12 { // bounded: bodies are at most limit+1 bytes
						n, rerr := resp.Body.Read(buf)
						got = append(got, buf[:n]...)
						if rerr != nil {
							if rerr != io.EOF {
								err = rerr
							}
							break
						}
					}
					<-done
					resp.Body.Close()
				}
				want := plain[v]
				switch {
				case closeEarly:
					closedEarly.Add(1)
				case kind == "good":
					innocent.Add(1)
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("%s: %d bytes (byte-exact %v), %v; want the body", desc, len(got), bytes.Equal(got, want), err)
					}
				case kind == "bomb":
					rejected.Add(1)
					if stageOf(err) != "decoded" {
						t.Errorf("%s: %v, want stage decoded", desc, err)
					}
				case kind == "truncated", kind == "corrupt" && c != "br":
					rejected.Add(1)
					if stageOf(err) != "integrity" {
						t.Errorf("%s: %v after %d bytes, want stage integrity", desc, err, len(got))
					}
				}
				// Whatever was handed on, before an error or a Close, is this
				// response's own: a prefix of its body (zeros for a bomb).
				switch {
				case kind == "bomb":
					if bytes.ContainsFunc(got, func(r rune) bool { return r != 0 }) {
						t.Errorf("%s: bytes that are not the bomb's zeros", desc)
					}
				case kind == "corrupt" && c == "br":
					// brotli has no checksum: a flipped bit may decode to other bytes.
				case !bytes.HasPrefix(want, got):
					t.Errorf("%s: read %d bytes that are not a prefix of its own body", desc, len(got))
				}
				if len(got) > limit {
					t.Errorf("%s: %d bytes read, over the %d-byte budget", desc, len(got), limit)
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d requests in %v: %d innocent (byte-exact), %d closed early, %d rejected as they should be",
		requests, time.Since(start).Round(time.Millisecond), innocent.Load(), closedEarly.Load(), rejected.Load())
	if n := next.Load(); n < int64(requests) && !t.Failed() {
		t.Errorf("ran %d requests, want %d", n, requests)
	}
}

// gateWriter blocks every Write until the test lets it through.
type gateWriter struct {
	entered chan int
	gate    chan struct{}
	n       int
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.entered <- len(p)
	<-w.gate
	w.n += len(p)
	return len(p), nil
}

// TestCloseStopsWriteToOfKeptRedirect (trap: Close from another goroutine
// must abort the read in progress): io.Copy of a whole body into a slow
// writer stops between writes once the body is closed, as a whole body
// documents. The body of a redirect kept with ErrUseLastResponse (a lazy
// body verified whole on first use) once ignored its Close and wrote on to
// the end.
func TestCloseStopsWriteToOfKeptRedirect(t *testing.T) {
	t.Parallel()
	const size = 600000 // several pooled chunks, so several writes
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/elsewhere")
		serve(w, body{coding: "gzip", data: encode("gzip", text(size)), status: http.StatusFound})
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	w := &gateWriter{entered: make(chan int, 64), gate: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, resp.Body)
		done <- err
	}()
	select {
	case <-w.entered: // the first write is in progress
	case <-time.After(10 * time.Second):
		t.Fatal("no write within 10 s")
	}
	resp.Body.Close()
	close(w.gate) // let every write through from now on
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("io.Copy still running 10 s after Close")
	}
	if err == nil || w.n >= size {
		t.Errorf("io.Copy after Close: wrote %d of %d bytes, error %v; want it stopped with an error", w.n, size, err)
	}
}

// TestTransportInFlightCloseWhileReading: a streaming response body closed
// from another goroutine while a Read is blocked in the connection gives
// back its whole charge, and the blocked Read returns. Run with -race: the
// Close must not return the decoders (and their charge) while the Read
// still uses them.
func TestTransportInFlightCloseWhileReading(t *testing.T) {
	t.Parallel()
	for _, coding := range []string{"gzip", "zstd", "br"} {
		t.Run(coding, func(t *testing.T) {
			t.Parallel()
			full := encode(coding, text(2<<20))
			release := make(chan struct{})
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", coding)
				w.Write(full[:len(full)/2])
				w.(http.Flusher).Flush()
				select { // stall until the client is gone or the test ends
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer s.Close()
			defer close(release)
			f := limits.NewInFlight(64 << 20)
			tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 4 << 20}, InFlight: f, Streaming: true}
			defer tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4096)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatalf("first read: %v", err)
			}
			done := make(chan error, 1)
			go func() { done <- readToError(resp.Body, buf) }()
			time.Sleep(50 * time.Millisecond) // let the reader block on the stalled connection
			if f.InUse() == 0 {
				t.Fatal("InUse() = 0 while a coded body is being read")
			}
			resp.Body.Close()
			select {
			case err := <-done:
				if err == nil || err == io.EOF {
					t.Fatalf("Read after a concurrent Close = %v, want an error", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Read still blocked 20s after Close")
			}
			waitInUse(t, f, coding)
		})
	}
}

// TestMiddlewareInFlightCloseWhileReading: a streaming handler that closes
// its request body from one goroutine while another reads it gives back
// the whole charge, and neither races with the other (run with -race): the
// decoding.Reader must not be closed under a Read in progress.
func TestMiddlewareInFlightCloseWhileReading(t *testing.T) {
	t.Parallel()
	for _, coding := range []string{"gzip", "zstd", "br"} {
		t.Run(coding, func(t *testing.T) {
			t.Parallel()
			enc := encode(coding, text(2<<20))
			f := limits.NewInFlight(64 << 20)
			readErr := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				buf := make([]byte, 4096)
				if _, err := io.ReadFull(r.Body, buf); err != nil {
					readErr <- err
					return
				}
				done := make(chan error, 1)
				go func() { done <- readToError(r.Body, buf) }()
				time.Sleep(50 * time.Millisecond) // let the reader block on the stalled client
				r.Body.Close()
				select {
				case err := <-done:
					readErr <- err
				case <-time.After(20 * time.Second):
					readErr <- errors.New("Read still blocked 20s after Close")
				}
			})
			s := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxDecodedBytes: 4 << 20}, InFlight: f, Streaming: true})(h))
			defer s.Close()
			pr, pw := io.Pipe()
			go func() {
				pw.Write(enc[:len(enc)/2])
				time.Sleep(300 * time.Millisecond) // stalls while the handler closes
				pw.Write(enc[len(enc)/2:])
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", s.URL, pr)
			req.Header.Set("Content-Encoding", coding)
			if resp, err := s.Client().Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			select {
			case err := <-readErr:
				// Close waits for the blocked Read, which the client's rest
				// ends: the reader may win the lock again and reach the end.
				if err == nil {
					t.Fatal("Read loop ended without an error")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("handler did not finish within 20s")
			}
			waitInUse(t, f, coding)
		})
	}
}

// TestConcurrentReadJSONCheckedStream (trap: state without an owner while a
// Read runs): a streamed JSON body checked by Transport.JSON wraps the body
// in a checker that the body's read guard does not cover: the guard admits
// the next Read as soon as the body's own Read returns, while the first is
// still feeding the checker. Overlapping Reads, which must fail with
// "concurrent Read", raced on the checker (fed out of order: spurious
// syntax errors, or a data race under -race). Each Read either reads in
// turn or fails as a concurrent Read, and the valid document never fails
// its check.
func TestConcurrentReadJSONCheckedStream(t *testing.T) {
	t.Parallel()
	doc := `{"a":[` + strings.Repeat(`{"k":"v","n":[1,2,3]},`, 3000) + `0],"b":"` + strings.Repeat("x", 20000) + `"}`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, doc)
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Streaming: true, JSON: &limits.JSON{MaxDepth: 8}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	for round := range 60 {
		resp, err := client.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				buf := make([]byte, 37)
				for range 1 << 16 { // bounded: the body is about 130 KB
					_, err := resp.Body.Read(buf)
					switch {
					case err == nil:
					case err == io.EOF:
						return
					case strings.Contains(err.Error(), "concurrent Read"):
					default:
						t.Errorf("round %d: a Read of a valid JSON document failed: %v", round, err)
						return
					}
				}
			})
		}
		wg.Wait()
		resp.Body.Close()
	}
}

// TestStreamingCloseDuringBlockedRead: a handler that closes its body from
// another goroutine (a watchdog on the request's context, say) while its
// own Read waits for the client must not have the body's pooled decoder
// state handed back under that Read. Over HTTP/1.1 the Read resumes when
// the client's bytes arrive, and must not run on a decoder and buffer
// already returned to their pools (here it would panic on the reset
// buffer; under load another request would be decoding with them). Over
// HTTP/2 closing the request body ends the blocked Read at once: the
// decoders must still be released only after that Read has returned (run
// with -race to see the difference).
func TestStreamingCloseDuringBlockedRead(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		h2   bool
	}{{"HTTP1", false}, {"HTTP2", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mw := mustMW(t, boundhttp.MiddlewareConfig{Streaming: true})
			closing := make(chan struct{})
			s := httptest.NewUnstartedServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				first := make(chan struct{})
				closed := make(chan error, 1)
				go func() {
					<-first
					time.Sleep(100 * time.Millisecond) // the handler's next Read waits for the client
					close(closing)
					closed <- r.Body.Close()
				}()
				buf := make([]byte, 512)
				_, err := r.Body.Read(buf)
				close(first)
				if err == nil {
					err = readToError(r.Body, buf)
				}
				select {
				case cerr := <-closed:
					fmt.Fprintf(w, "%s read: %v; close: %v", r.Proto, err != nil, cerr)
				case <-time.After(5 * time.Second):
					fmt.Fprintf(w, "read: %v; Close did not return", err != nil)
				}
			})))
			s.EnableHTTP2 = tt.h2
			if tt.h2 {
				s.StartTLS()
			} else {
				s.Start()
			}
			t.Cleanup(s.Close)
			var status int
			var answer []byte
			if tt.h2 {
				status, answer = postHalfOverHTTP2(t, s)
			} else {
				status, answer = postHalfThenRest(t, s, closing)
			}
			want := "HTTP/1.1 read: true; close: <nil>"
			if tt.h2 {
				want = "HTTP/2.0 read: true; close: <nil>"
			}
			if status != 200 || string(answer) != want {
				t.Errorf("body closed during a blocked Read: %d %q, want 200 %q", status, answer, want)
			}
		})
	}
}

// postHalfThenRest sends half of a gzip body over HTTP/1.1, waits until
// the handler closes its body, then sends the rest and reads the answer.
func postHalfThenRest(t *testing.T, s *httptest.Server, closing <-chan struct{}) (int, []byte) {
	t.Helper()
	raw := make([]byte, 200000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte('a' + rng.IntN(26)) // compressible a little: the decoder needs many reads
	}
	data := encode("gzip", raw)
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n", len(data))
	conn.Write(data[:len(data)/2])
	select {
	case <-closing:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler never closed its body")
	}
	time.Sleep(100 * time.Millisecond) // Close is under way
	go conn.Write(data[len(data)/2:])  // may fail once the server closes
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("body closed during a blocked Read: no answer (%v); want the handler's", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

// postHalfOverHTTP2 sends half of a gzip body over HTTP/2 and nothing more
// until the test ends, and reads the answer.
func postHalfOverHTTP2(t *testing.T, s *httptest.Server) (int, []byte) {
	t.Helper()
	pr, pw := io.Pipe()
	data := encode("gzip", text(200000))
	go pw.Write(data[:len(data)/2]) // and nothing more until the end of the test
	t.Cleanup(func() { pw.Close() })
	req, _ := http.NewRequest("POST", s.URL, pr)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

// blockingWriter blocks its first Write until released.
type blockingWriter struct {
	entered, release chan struct{}
	n                int
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	if b.n == 0 {
		close(b.entered)
		select {
		case <-b.release:
		case <-time.After(5 * time.Second):
		}
	}
	b.n += len(p)
	return len(p), nil
}

// TestWholeBodyCloseDuringWriteTo: in whole-body mode the handler's body is
// pooled chunks. Closing it from another goroutine while io.Copy (the
// body's WriteTo) is inside a Write must not hand the chunks back to their
// pool under that Write: the Write still reads the chunk (another request
// could be filling it by then), and WriteTo then indexed an emptied list
// (a panic). "one chunk": the Write in progress completes the copy.
// "between chunks" (trap: a closed body's error that depends on the path
// that noticed the Close): closed between two chunks, WriteTo must fail as
// every Read after Close does on the server, with
// http.ErrBodyReadAfterClose, the error handlers written for net/http look
// for; WriteTo returned the engine's own error.
func TestWholeBodyCloseDuringWriteTo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		size int
		want string
	}{
		{"one chunk", 300, "copied 300, <nil>; after close: true"},
		{"between chunks", 256 << 10, "closed: true; after close: true"}, // several chunks
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
				closed := make(chan struct{})
				go func() {
					defer close(closed)
					<-bw.entered
					r.Body.Close()
					close(bw.release)
				}()
				n, err := io.Copy(bw, r.Body)
				<-closed
				_, rerr := r.Body.Read(make([]byte, 1))
				after := errors.Is(rerr, http.ErrBodyReadAfterClose)
				if int(n) == tt.size {
					fmt.Fprintf(w, "copied %d, %v; after close: %v", n, err, after)
				} else {
					fmt.Fprintf(w, "closed: %v; after close: %v", errors.Is(err, http.ErrBodyReadAfterClose), after)
				}
			})))
			t.Cleanup(s.Close)
			status, answer := post(t, s.URL, "", text(tt.size), false)
			if status != 200 || answer != tt.want {
				t.Errorf("body closed during its WriteTo: %d %q, want 200 %q", status, answer, tt.want)
			}
		})
	}
}

// TestReadBodyConcurrentClose: Close from another goroutine during ReadBody
// (as net/http allows for bodies) gives either the whole body or an error,
// never a prefix; under -race, no race. With an in-flight budget ("in
// flight"), the charge is given back exactly once.
func TestReadBodyConcurrentClose(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		f    *limits.InFlight
	}{{"plain", nil}, {"in flight", limits.NewInFlight(8 << 20)}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := text(300 << 10)
			s := server(t, body{coding: "gzip", data: encode("gzip", data)})
			tr := &boundhttp.Transport{InFlight: tt.f}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			for i := range 20 {
				resp, err := c.Get(s.URL)
				if err != nil {
					t.Fatal(err)
				}
				done := make(chan struct{})
				go func() {
					resp.Body.Close()
					close(done)
				}()
				got, err := boundhttp.ReadBody(resp.Body)
				<-done
				if err == nil && !bytes.Equal(got, data) || err != nil && len(got) != 0 {
					t.Fatalf("round %d: ReadBody during Close = %d bytes, %v; want the whole body or an error", i, len(got), err)
				}
				if tt.f != nil {
					if n := tt.f.InUse(); n != 0 {
						t.Fatalf("round %d: InUse = %d after ReadBody and Close; want 0", i, n)
					}
				}
			}
		})
	}
}
