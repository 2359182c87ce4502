package boundhttp_test

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// writePlan is what a test handler writes behind a response cap.
type writePlan struct {
	n         int    // body bytes to write: text(n)
	piece     int    // bytes per Write; 0: one Write
	cl        int    // Content-Length to declare; 0: none
	header    bool   // WriteHeader(200) before the body
	flushAt   int    // flush once this many bytes were written; 0: never
	readFrom  bool   // write through io.ReaderFrom (of a reader without WriteTo)
	file      string // with readFrom: after flushAt bytes, read this file (sendfile)
	goroutine bool   // write from a goroutine the handler waits for
}

// planHandler writes plans[i] for path /i and sends the errors its writes
// returned (nil ones dropped) to errs before it returns.
func planHandler(plans []writePlan, errs chan<- []error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{i}", func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.PathValue("i"))
		p := plans[i]
		var got []error
		keep := func(err error) {
			if err != nil {
				got = append(got, err)
			}
		}
		write := func() {
			if p.cl > 0 {
				w.Header().Set("Content-Length", strconv.Itoa(p.cl))
			}
			if p.header {
				w.WriteHeader(http.StatusOK)
			}
			data := text(p.n)
			if p.readFrom {
				if p.flushAt > 0 {
					_, err := w.Write(data[:p.flushAt])
					keep(err)
					keep(http.NewResponseController(w).Flush())
					data = data[p.flushAt:]
				}
				var src io.Reader = struct{ io.Reader }{bytes.NewReader(data)}
				if p.file != "" {
					f, err := os.Open(p.file)
					if err != nil {
						panic(err)
					}
					defer f.Close()
					src = f
				}
				// Through ReadFrom where the writer has it (not on
				// HTTP/2), else through Writes of what a ReadFrom
				// reads at a time.
				var err error
				if rf, ok := w.(io.ReaderFrom); ok {
					_, err = rf.ReadFrom(src)
				} else {
					_, err = io.CopyBuffer(w, src, make([]byte, 4096))
				}
				keep(err)
			} else {
				piece := p.piece
				if piece == 0 {
					piece = max(p.n, 1)
				}
				for off := 0; off < p.n; {
					end := min(off+piece, p.n)
					if off < p.flushAt && p.flushAt < end {
						end = p.flushAt
					}
					_, err := w.Write(data[off:end])
					keep(err)
					if end == p.flushAt {
						keep(http.NewResponseController(w).Flush())
					}
					off = end
				}
			}
			if len(got) > 0 {
				_, err := w.Write([]byte("x")) // a later write
				keep(err)
			}
		}
		if p.goroutine {
			var wg sync.WaitGroup
			wg.Go(write)
			wg.Wait()
		} else {
			write()
		}
		errs <- got
	})
	return mux
}

// cappedServer serves plans behind a middleware with MaxResponseBytes
// limit, over HTTP/1.1, or HTTP/2 with TLS.
func cappedServer(t *testing.T, limit int64, h2 bool, plans []writePlan, log *slog.Logger) (*httptest.Server, chan []error) {
	t.Helper()
	return cappedServerBy(t, false, limit, h2, plans, log)
}

// cappedServerBy is cappedServer with the cap of the Middleware or, alone,
// the cap of ResponseCap.
func cappedServerBy(t *testing.T, alone bool, limit int64, h2 bool, plans []writePlan, log *slog.Logger) (*httptest.Server, chan []error) {
	t.Helper()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: limit, Logger: log})
	if alone {
		mw, err = boundhttp.NewResponseCap(boundhttp.ResponseCapConfig{MaxBytes: limit, Logger: log})
	}
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan []error, 1)
	s := httptest.NewUnstartedServer(mw(planHandler(plans, errs)))
	if h2 {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s, errs
}

// wantStageResponse checks that the handler's write errors all match the
// response stage, and that when breached there are two: the write that
// passed the cap and a later one.
func wantStageResponse(t *testing.T, name string, errs []error, breached bool) {
	t.Helper()
	if breached && len(errs) < 2 || !breached && len(errs) > 0 {
		t.Errorf("%s: handler's write errors %v; want the breaching write's and a later one's: %v", name, errs, breached)
	}
	for _, err := range errs {
		var le *limits.Error
		if !errors.Is(err, limits.ErrTooLarge) || !errors.As(err, &le) || le.Stage != limits.StageResponse {
			t.Errorf("%s: handler's write error %v (%T), want a *limits.Error of stage response", name, err, err)
		}
	}
}

// TestResponseCapBoundary: cap-1, cap and cap+1 bytes, in one write or
// many, with and without a declared Content-Length, through Write and
// ReadFrom; over the cap before anything was sent is a 500 problem, after,
// an aborted response.
func TestResponseCapBoundary(t *testing.T) {
	t.Parallel()
	const small = 100   // within the held bytes
	const large = 10000 // more than the held bytes
	dir := t.TempDir()
	// rest writes the bytes of text(n) after the first from to a file.
	rest := func(n, from int) string {
		p := filepath.Join(dir, strconv.Itoa(n))
		if err := os.WriteFile(p, text(n)[from:], 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []capCase{
		{"empty", small, writePlan{}, 200, 0, false},
		{"cap-1", small, writePlan{n: small - 1}, 200, 0, false},
		{"cap", small, writePlan{n: small}, 200, 0, false},
		{"cap+1", small, writePlan{n: small + 1}, 500, small + 1, false},
		{"cap+1 after WriteHeader", small, writePlan{n: small + 1, header: true}, 500, small + 1, false},
		{"cap in 1-byte writes", small, writePlan{n: small, piece: 1}, 200, 0, false},
		{"cap+1 in 1-byte writes", small, writePlan{n: small + 1, piece: 1}, 500, small + 1, false},
		{"Content-Length at cap", small, writePlan{n: small, cl: small}, 200, 0, false},
		{"Content-Length cap+1", small, writePlan{n: small + 1, cl: small + 1}, 500, small + 1, true},
		{"Content-Length cap+1, WriteHeader, no write", small, writePlan{cl: small + 1, header: true}, 500, small + 1, true},
		{"Content-Length at cap, flushed", small, writePlan{n: small, cl: small, piece: 10, flushAt: 50}, 200, 0, false},
		{"large cap in pieces", large, writePlan{n: large, piece: 1000}, 200, 0, false},
		{"large cap+1 in one write", large, writePlan{n: large + 1}, 500, large + 1, false},
		{"large cap+1, past the held bytes", large, writePlan{n: large + 1, piece: 1000}, aborted, 0, false},
		{"cap after a flush", small, writePlan{n: small, piece: 10, flushAt: 10}, 200, 0, false},
		{"cap+1 after a flush", small, writePlan{n: small + 1, piece: 10, flushAt: 10}, aborted, 0, false},
		{"cap+1 after a flush, from a goroutine", small, writePlan{n: small + 1, piece: 10, flushAt: 10, goroutine: true}, aborted, 0, false},
		{"ReadFrom cap", small, writePlan{n: small, readFrom: true}, 200, 0, false},
		{"ReadFrom cap+1", small, writePlan{n: small + 1, readFrom: true}, 500, small + 1, false},
		{"ReadFrom large cap", large, writePlan{n: large, readFrom: true}, 200, 0, false},
		{"ReadFrom large cap+1", large, writePlan{n: large + 1, readFrom: true}, aborted, 0, false},
		{"ReadFrom cap after a flush", small, writePlan{n: small, readFrom: true, flushAt: 10}, 200, 0, false},
		{"ReadFrom cap+1 after a flush", small, writePlan{n: small + 1, readFrom: true, flushAt: 10}, aborted, 0, false},
		{"sendfile cap after a flush", large, writePlan{n: large, readFrom: true, flushAt: 1000, file: rest(large, 1000)}, 200, 0, false},
		{"sendfile cap+1 after a flush", large, writePlan{n: large + 1, readFrom: true, flushAt: 1000, file: rest(large+1, 1000)}, aborted, 0, false},
	}
	for _, h2 := range []bool{false, true} {
		for _, tt := range tests {
			checkCapped(t, h2, tt)
			if !testing.Short() || !h2 {
				checkCappedBy(t, true, h2, tt) // the same cap, alone
			}
		}
	}
}

// aborted is the capCase status of a response that must end in an error.
const aborted = 0

// capCase is a writePlan behind a cap of limit, and what a client gets.
type capCase struct {
	name     string
	limit    int64
	plan     writePlan
	status   int   // 200 with the bytes written, 500 with a problem, or aborted
	observed int64 // the problem's
	declared bool  // the problem's
}

// checkCapped serves tt over HTTP/1.1 or HTTP/2 and checks what a client
// gets: never a clean end when aborted.
func checkCapped(t *testing.T, h2 bool, tt capCase) {
	t.Helper()
	checkCappedBy(t, false, h2, tt)
}

// checkCappedBy is checkCapped with the cap of the Middleware or, alone,
// the cap of ResponseCap.
func checkCappedBy(t *testing.T, alone bool, h2 bool, tt capCase) {
	t.Helper()
	tt.name = map[bool]string{false: "HTTP/1.1 ", true: "HTTP/2 "}[h2] + map[bool]string{true: "ResponseCap "}[alone] + tt.name
	s, errs := cappedServerBy(t, alone, tt.limit, h2, []writePlan{tt.plan}, slog.New(&logRecorder{}))
	resp, err := s.Client().Get(s.URL + "/0")
	if err == nil && h2 && resp.ProtoMajor != 2 {
		t.Fatalf("%s: the client spoke %s", tt.name, resp.Proto)
	}
	var got []byte
	if err == nil {
		got, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	herrs := <-errs
	switch tt.status {
	case aborted:
		if err == nil {
			t.Errorf("%s: %d bytes, status %d, clean end; want an error", tt.name, len(got), resp.StatusCode)
		}
		wantStageResponse(t, tt.name, herrs, true)
	case 200:
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, text(tt.plan.n)) {
			t.Errorf("%s: %v, %d bytes; want 200 with the %d bytes written", tt.name, err, len(got), tt.plan.n)
			return
		}
		if tt.plan.cl > 0 && resp.ContentLength != int64(tt.plan.cl) {
			t.Errorf("%s: Content-Length %d, want %d", tt.name, resp.ContentLength, tt.plan.cl)
		}
		wantStageResponse(t, tt.name, herrs, false)
	case 500:
		if err != nil || resp.StatusCode != 500 {
			t.Errorf("%s: %v %v, want 500", tt.name, err, resp)
			return
		}
		p := problem(t, string(got))
		if p.Stage != "response" || p.Status != 500 || p.Limit != tt.limit || p.Observed != tt.observed || p.Declared != tt.declared {
			t.Errorf("%s: problem %+v, want stage response, limit %d, observed %d, declared %v", tt.name, p, tt.limit, tt.observed, tt.declared)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q, want application/problem+json", tt.name, ct)
		}
		wantStageResponse(t, tt.name, herrs, tt.plan.n > 0)
	}
}
