package boundhttp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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
