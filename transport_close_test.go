package boundhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
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

// letterServer answers /{coding}/{mode}?n=N with N bytes of one letter,
// chosen per request and named in the X-Letter header, encoded with coding;
// mode "chunked" flushes in pieces. Distinct letters let a test tell one
// response's bytes from another's.
func letterServer(t *testing.T) *httptest.Server {
	t.Helper()
	var l letters
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		letter := l.next()
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		var c string
		var chunked bool
		fmt.Sscanf(r.URL.Path, "/%s", &c)
		if j := bytes.IndexByte([]byte(c), '/'); j >= 0 {
			c, chunked = c[:j], c[j+1:] == "chunked"
		}
		w.Header().Set("X-Letter", string(letter))
		serve(w, body{coding: c, data: l.encoded(c, letter, n), chunked: chunked})
	}))
	t.Cleanup(s.Close)
	return s
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

// TestCloseDuringReadPooledState pins the trap "a body's state handed back
// to a pool while a Read still runs": Close from another goroutine, at many
// points of a Read (and of a WriteTo, through io.Copy), in streaming (decoder and bufio.Reader pooled) and
// whole-body mode (chunks pooled), for every coding. The Read in progress
// must end with an error or its own bytes, never another response's bytes,
// a panic or (under -race) a data race; the next responses, which reuse the
// pooled state, must be byte-exact.
func TestCloseDuringReadPooledState(t *testing.T) {
	t.Parallel()
	s := letterServer(t)
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	rounds := 30
	if testing.Short() {
		rounds = 8
	}
	const size = 100000
	var wg sync.WaitGroup
	for _, c := range codings {
		for _, streaming := range []bool{false, true} {
			wg.Go(func() {
				client := &http.Client{Transport: tr}
				url := fmt.Sprintf("%s/%s/chunked?n=%d", s.URL, c, size)
				for i := range rounds {
					req, _ := http.NewRequest("GET", url, nil)
					if streaming {
						req = req.WithContext(boundhttp.WithStreaming(req.Context()))
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Errorf("%s streaming %v: %v", c, streaming, err)
						return
					}
					letter, read, foreign, rerr := readWhileClosing(resp, i, true, 400*time.Microsecond)
					if foreign > 0 || read > size || (rerr == io.EOF && read != size) {
						t.Errorf("%s streaming %v round %d: read %d bytes, %d not %q, then %v", c, streaming, i, read, foreign, letter, rerr)
					}
				}
			})
		}
	}
	wg.Wait()
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
