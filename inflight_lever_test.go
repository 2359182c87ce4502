package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestLeverPerCodecAtTheServer states what a client holds of the server's
// in-flight budget per byte of body it sent, codec by codec, with the worst
// stream for each (the largest window the budget allows, incompressible so
// that every byte is evidence the decoder has not used yet): nothing for its
// headers, nothing for its first 512 bytes (the whole body, if shorter),
// and never more than decoder.EarnRatio (128) bytes per byte sent, however
// far it goes before it stalls. The body is sent in pieces that grow by a
// quarter;
// after each, the test waits until the server asks for more, having read all
// of it, and reads the charge. The last piece crosses the point where the
// body has earned its bound, which it must then hold: the bound is reached,
// so the ratio is measured, not assumed. The numbers are logged.
// Sabotage: reserving the bound at the first byte (no readAhead) fails every
// row at its first byte (196,608 bytes held by one for identity, 33 MB for
// brotli); an EarnRatio of 256 in earnedAt fails every row at its jump.
func TestLeverPerCodecAtTheServer(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{7}).Read(data)
	for _, tc := range []struct {
		coding string
		head   string // request headers beyond the method line
		body   []byte
	}{
		{"identity", "Content-Length: 65536\r\n", data[:65536]},
		{"identity chunked", "Transfer-Encoding: chunked\r\n", data},
		{"gzip", "Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", testenc.Encode("gzip", data)},
		{"deflate", "Content-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n", testenc.Encode("deflate", data)},
		{"br 16 MiB window", "Content-Encoding: br\r\nTransfer-Encoding: chunked\r\n", brotli24(data)},
		{"zstd 16 MiB window", "Content-Encoding: zstd\r\nTransfer-Encoding: chunked\r\n", zstdRaw(data, 24)},
	} {
		t.Run(tc.coding, func(t *testing.T) {
			f := limits.NewInFlight(1 << 30)
			budget := limits.Budget{MaxWindowBytes: 16 << 20}
			asked := make(chan int64, 1)
			mw := mustMW(t, boundhttp.MiddlewareConfig{InFlight: f, Budget: budget})
			inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Body = &askSpy{ReadCloser: r.Body, asked: asked}
				inner.ServeHTTP(w, r)
			}))
			t.Cleanup(s.Close)
			c, err := net.Dial("tcp", s.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			head := "POST / HTTP/1.1\r\nHost: x\r\n" + tc.head + "\r\n"
			io.WriteString(c, head)
			if got := waitAsked(t, asked, 0); got != 0 {
				t.Fatalf("the server asked for more after %d bytes, want 0", got)
			}
			if held := f.InUse(); held != 0 {
				t.Errorf("%d bytes of headers alone hold %d, want 0", len(head), held)
			}
			chunkedBody := strings.Contains(tc.head, "chunked")
			leverSteps(t, f, asked, tc.coding, tc.body, chunkedBody, func(p []byte) {
				if chunkedBody {
					p = chunked(p)
				}
				c.Write(p)
			})
		})
	}
}

// leverSteps sends body through send in pieces that grow by a quarter and,
// after each, waits until the reader asks for more having read it all, and
// checks what f holds: nothing before 512 bytes, never more than
// decoder.EarnRatio per byte sent, and its bound (4 MiB or more) at the
// end, unless the body ended first (a framed body's last piece is not
// waited for: its reader has it all). It logs the steps.
func leverSteps(t *testing.T, f *limits.InFlight, asked chan int64, coding string, body []byte, open bool, send func([]byte)) {
	t.Helper()
	var sent, most int64
	var ratio float64
	log := []string{}
	for next := int64(1); sent < int64(len(body)); next = min(max(next+1, next*5/4), int64(len(body))) {
		send(body[sent:next])
		sent = next
		if sent == int64(len(body)) && !open {
			break // the body ended: its reader has it, and gives it back
		}
		waitAsked(t, asked, sent)
		held := f.InUse()
		most = max(most, held)
		log = append(log, fmt.Sprintf("%d:%d", sent, held))
		if sent < 512 && held != 0 {
			t.Errorf("%d bytes hold %d, want 0 before the first 512", sent, held)
		}
		if r := float64(held) / float64(sent); r > ratio {
			ratio = r
		}
		if held > decoder.EarnRatio*sent {
			t.Errorf("%d bytes hold %d: %.0f per byte, more than %d", sent, held, float64(held)/float64(sent), decoder.EarnRatio)
		}
		if held >= 4<<20 {
			break // the bound is reserved: every later byte only lowers the ratio
		}
	}
	if most < 4<<20 && open {
		t.Errorf("the body never held its bound (most %d): the ratio was not measured where it peaks", most)
	}
	t.Logf("%s: at most %.1f bytes held per byte sent; sent:held %s", coding, ratio, strings.Join(log, " "))
}

// TestLeverPerCodecAtTheClient is TestLeverPerCodecAtTheServer for a
// Transport reading response bodies whole: a server that sends the worst
// stream of each codec in growing pieces holds nothing of the client's
// budget for its first 512 bytes and never more than decoder.EarnRatio per
// byte it sent. The Base hands the Transport each response body through a
// spy that tells when the Transport asks for more. Sabotage: as for the
// server (no readAhead: 33 MB held by brotli's first byte).
func TestLeverPerCodecAtTheClient(t *testing.T) {
	t.Parallel()
	data := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{9}).Read(data)
	for _, tc := range []struct {
		coding string
		body   []byte
	}{
		{"identity", data},
		{"gzip", testenc.Encode("gzip", data)},
		{"deflate", testenc.Encode("deflate", data)},
		{"br 16 MiB window", brotli24(data)},
		{"zstd 16 MiB window", zstdRaw(data, 24)},
	} {
		t.Run(tc.coding, func(t *testing.T) {
			pieces := make(chan []byte)
			done := make(chan struct{})
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.coding != "identity" {
					w.Header().Set("Content-Encoding", strings.Fields(tc.coding)[0])
				}
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				for {
					select {
					case p := <-pieces:
						w.Write(p)
						w.(http.Flusher).Flush()
					case <-done:
						return
					}
				}
			}))
			t.Cleanup(s.Close)
			f := limits.NewInFlight(1 << 30)
			asked := make(chan int64, 1)
			base := boundhttp.NewBaseTransport()
			t.Cleanup(base.CloseIdleConnections)
			tr := &boundhttp.Transport{InFlight: f, Budget: limits.Budget{MaxWindowBytes: 16 << 20},
				Base: rtFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := base.RoundTrip(r)
					if err == nil {
						resp.Body = &askSpy{ReadCloser: resp.Body, asked: asked}
					}
					return resp, err
				})}
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				if resp, err := (&http.Client{Transport: tr}).Get(s.URL); err == nil {
					resp.Body.Close()
				}
			}()
			if got := waitAsked(t, asked, 0); got != 0 {
				t.Fatalf("the client asked for more after %d bytes, want 0", got)
			}
			if held := f.InUse(); held != 0 {
				t.Errorf("the response's headers alone hold %d, want 0", held)
			}
			leverSteps(t, f, asked, tc.coding, tc.body, true, func(p []byte) { pieces <- p })
			close(done)
			<-ended
		})
	}
}

// askSpy reports on asked, at each Read, the bytes read before it: the
// server asks for more once it has taken what it read so far into account.
type askSpy struct {
	io.ReadCloser
	n     int64
	asked chan int64
}

func (s *askSpy) Read(p []byte) (int, error) {
	select {
	case <-s.asked:
	default:
	}
	s.asked <- s.n
	n, err := s.ReadCloser.Read(p)
	s.n += int64(n)
	return n, err
}

// waitAsked waits until the server asks for more having read n bytes, and
// returns what it had read; it fails the test after 30 s.
func waitAsked(t *testing.T, asked chan int64, n int64) int64 {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-asked:
			if got >= n {
				return got
			}
		case <-deadline:
			t.Fatalf("the server did not ask for more after %d bytes within 30 s", n)
		}
	}
}

// brotli24 is data as a brotli stream declaring a 16 MiB window.
func brotli24(data []byte) []byte {
	var b bytes.Buffer
	w := brotli.NewWriterOptions(&b, brotli.WriterOptions{Quality: 5, LGWin: 24})
	w.Write(data)
	w.Close()
	return b.Bytes()
}

// zstdRaw is data as a zstd frame declaring a window of 1<<log bytes (10 <=
// log <= 41), in raw blocks: no decoder can tell from its first bytes that
// it will need less.
func zstdRaw(data []byte, log int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(log-10) << 3}
	for len(data) > 0 {
		n := min(len(data), 128<<10)
		h := uint32(n) << 3 // raw block
		if n == len(data) {
			h |= 1 // last
		}
		b = append(append(b, byte(h), byte(h>>8), byte(h>>16)), data[:n]...)
		data = data[n:]
	}
	return b
}

// chunked frames b as one chunk of a chunked body, not the last.
func chunked(b []byte) []byte {
	return append(append(fmt.Appendf(nil, "%x\r\n", len(b)), b...), "\r\n"...)
}

// zstdHeader8MiB is the start of a zstd frame declaring an 8 MiB window:
// the magic number and a frame header descriptor with a window descriptor
// (exponent 13: 8 MiB), then nothing.
func zstdHeader8MiB() []byte {
	return []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3}
}
