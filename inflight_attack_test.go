package boundhttp_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// gzipBomb returns a valid gzip member of size zero bytes, built in
// milliseconds: one DEFLATE segment that decodes to 1 MiB of zeros from a
// history of zeros, repeated.
func gzipBomb(size int64) []byte {
	const seg = 1 << 20
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	zeros := make([]byte, seg)
	zw.Write(zeros[:64<<10])
	zw.Flush()
	prefix := bytes.Clone(buf.Bytes())
	buf.Reset()
	zw.Write(zeros)
	zw.Flush()
	segment := bytes.Clone(buf.Bytes())
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	out = append(out, prefix...)
	n := int64(64 << 10)
	for ; n+seg <= size; n += seg {
		out = append(out, segment...)
	}
	out = append(out, 0x03, 0x00) // a final, empty fixed-Huffman block
	crc := crc32.NewIEEE()
	for left := n; left > 0; left -= seg {
		crc.Write(zeros[:min(left, seg)])
	}
	out = binary.LittleEndian.AppendUint32(out, crc.Sum32())
	return binary.LittleEndian.AppendUint32(out, uint32(n))
}

// heapSampler samples the bytes of heap objects every millisecond.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(h.done)
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// perConnection is the heap one loopback connection of this test may
// hold besides what the in-flight budget charges: net/http's buffers and
// structures on the server side (about 16 KiB, see the Middleware doc) and
// on the client side, both in this process, and the echo handler's copy of
// a valid body.
const perConnection = 64 << 10

// slack is the heap that is neither charged nor per connection: idle chunks
// and decoders in sync.Pools (reused, never more than were charged at once)
// and garbage not yet collected (GC percent 10 during the test). Measured
// growth over the budget: 0 to 15 MiB on two shared cores.
const slack = 16 << 20

// TestMiddlewareInFlightAttack: against a Middleware with a 64 MiB
// in-flight budget, 64 concurrent 1 GiB gzip bombs, 64 brotli streams
// declaring a 16 MiB window, and 64 connections that send 12 bytes of such
// a stream and stall, while 200 valid requests are made. Peak heap growth
// stays under the budget plus perConnection per connection; every valid
// request gets its exact answer or a 503 with Retry-After. The heap is
// sampled through runtime/metrics every millisecond. Sabotage: the
// same load without InFlight (set attackInFlight false) grows the heap by
// more than 1 GiB (64 ring buffers of 16 MiB) and fails. Under the race
// detector there are 16 of each attacker and 50 valid requests.
func TestMiddlewareInFlightAttack(t *testing.T) {
	const budget = 64 << 20
	attackers, nvalid := 64, 200
	if raceEnabled {
		attackers, nvalid = 16, 50 // the full load takes 30 s under -race on two shared cores
	}
	f := limits.NewInFlight(budget)
	cfg := boundhttp.MiddlewareConfig{
		Budget: limits.Budget{MaxDecodedBytes: 1 << 20, Timeout: time.Second},
	}
	if attackInFlight {
		cfg.InFlight = f
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		io.WriteString(w, sum(b))
	})
	s := httptest.NewServer(mustMW(t, cfg)(echo))
	defer s.Close()
	addr := s.Listener.Addr().String()

	bomb := gzipBomb(1 << 30)
	brStream := append(brotliStall(), bytes.Repeat([]byte("x"), 2<<20)...)
	valid := make([][]byte, nvalid)
	for i := range valid {
		valid[i] = []byte(fmt.Sprintf(`{"i":%d,"pad":%q}`, i, strings.Repeat("v", 1+i*97%(32<<10))))
	}

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapObjects()
	h := sampleHeap()

	attack := &http.Transport{DisableKeepAlives: true, MaxConnsPerHost: 0}
	defer attack.CloseIdleConnections()
	var wg sync.WaitGroup
	var statuses sync.Map
	count := func(kind string, code int) {
		v, _ := statuses.LoadOrStore(fmt.Sprint(kind, " ", code), new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
	}
	for range attackers {
		wg.Go(func() { count("gzip bomb", postRaw(attack, s.URL, "gzip", bomb)) })
		wg.Go(func() { count("br 16 MiB window", postRaw(attack, s.URL, "br", brStream)) })
		wg.Go(func() {
			head := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nContent-Encoding: br\r\n\r\n"
			line := sendRaw(addr, head, brotliStall(), 0)
			code := 0
			fmt.Sscanf(line, "HTTP/1.1 %d", &code)
			count("br stall", code)
		})
	}
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 16}}
	var ok, busy atomic.Int32
	jobs := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range jobs {
				ce := ""
				if i%2 == 1 {
					ce = "gzip"
				}
				req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(encode(ce, valid[i])))
				req.Header.Set("Content-Type", "application/json")
				if ce != "" {
					req.Header.Set("Content-Encoding", ce)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("valid request %d lost: %v", i, err)
					continue
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					t.Errorf("valid request %d: reading the answer: %v", i, err)
				case resp.StatusCode == 200 && string(got) == sum(valid[i]):
					ok.Add(1)
				case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
					busy.Add(1)
				default:
					t.Errorf("valid request %d answered %d %q, want 200 %q or 503 with Retry-After", i, resp.StatusCode, got, sum(valid[i]))
				}
			}
		})
	}
	for i := range valid {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	peak := h.Stop()
	client.CloseIdleConnections()

	growth := int64(peak) - int64(base)
	conns := int64(3*attackers + 16)
	bound := int64(budget) + conns*perConnection + slack
	statuses.Range(func(k, v any) bool { t.Logf("%s: %d", k, v.(*atomic.Int32).Load()); return true })
	t.Logf("valid: %d exact, %d busy; heap growth %.1f MiB (bound %.1f MiB); Peak() %.1f MiB of %.0f MiB",
		ok.Load(), busy.Load(), float64(growth)/(1<<20), float64(bound)/(1<<20), float64(f.Peak())/(1<<20), float64(budget)/(1<<20))
	if ok.Load()+busy.Load() != int32(len(valid)) {
		t.Errorf("%d valid requests answered, want %d", ok.Load()+busy.Load(), len(valid))
	}
	if growth > bound {
		t.Errorf("peak heap growth %d bytes, want at most %d (budget %d + %d connections x %d + slack %d)", growth, bound, budget, conns, perConnection, slack)
	}
	if attackInFlight {
		waitInUse(t, f, "attack")
		if f.Peak() == 0 {
			t.Errorf("Peak() = 0: nothing was charged")
		}
	}
}

// attackInFlight is false only to show the test failing without InFlight.
const attackInFlight = true

// postRaw posts body and returns the status, or 0 if the request failed
// (the server may close while the body is still being sent).
func postRaw(tr http.RoundTripper, url, ce string, body []byte) int {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Encoding", ce)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
