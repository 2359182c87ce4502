package boundhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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

// TestResponseCapConfig: zero leaves the writer alone, negative is refused.
func TestResponseCapConfig(t *testing.T) {
	t.Parallel()
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: -1}); err == nil {
		t.Errorf("NewMiddleware(MaxResponseBytes: -1) = nil error, want one")
	}
	for _, tt := range []struct {
		limit   int64
		wrapped bool
	}{{0, false}, {1, true}} {
		var typ string
		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: tt.limit})
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			typ = fmt.Sprintf("%T", w)
		})))
		resp, err := s.Client().Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s.Close()
		if got := typ != "*http.response"; got != tt.wrapped {
			t.Errorf("MaxResponseBytes %d: the handler writes to %s; wrapped %v, want %v", tt.limit, typ, got, tt.wrapped)
		}
	}
}

// TestResponseCapStreaming: in streaming mode the cap applies the same way,
// and a request body breach the handler does not answer is still the
// middleware's 413.
func TestResponseCapStreaming(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Streaming: true, MaxResponseBytes: 100,
		Budget: limits.Budget{MaxWireBytes: 50}})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write(text(n))
	})))
	defer s.Close()
	for _, tt := range []struct {
		n, body int
		status  int
		stage   string
	}{{100, 10, 200, ""}, {101, 10, 500, "response"}, {10, 51, 413, "wire"}} {
		resp, err := s.Client().Post(s.URL+"?n="+strconv.Itoa(tt.n), "text/plain", strings.NewReader(strings.Repeat("b", tt.body)))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tt.status || tt.stage != "" && string(problem(t, string(data)).Stage) != tt.stage {
			t.Errorf("streaming, %d-byte request, %d-byte response: %v %d %q; want %d %s", tt.body, tt.n, err, resp.StatusCode, data, tt.status, tt.stage)
		}
	}
}

// TestResponseCapAloneChargesNoRequest pins the trap of a response cap that
// only comes with a request cap: ResponseCap leaves the request body alone
// (a 5 MiB body, over the Middleware's 4 MiB default, reaches the handler
// whole, its gzip coding undecoded and its header kept) and caps only
// what the handler writes.
func TestResponseCapAloneChargesNoRequest(t *testing.T) {
	t.Parallel()
	const size = 5 << 20
	var got int
	var coding string
	capped, err := boundhttp.NewResponseCap(boundhttp.ResponseCapConfig{MaxBytes: 10, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(capped(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			t.Errorf("request body: %v", err)
		}
		got, coding = int(n), r.Header.Get("Content-Encoding")
		io.WriteString(w, r.URL.Query().Get("say"))
	})))
	defer s.Close()
	for _, tt := range []struct {
		say    string
		status int
	}{{"0123456789", 200}, {"0123456789+", 500}} {
		req, _ := http.NewRequest("POST", s.URL+"?say="+tt.say, strings.NewReader(strings.Repeat("z", size)))
		req.Header.Set("Content-Encoding", "gzip")
		resp, err := s.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got != size || coding != "gzip" || resp.StatusCode != tt.status || tt.status == 200 && string(data) != tt.say {
			t.Errorf("answer %q: handler read %d bytes with Content-Encoding %q; client got %d %.100q; want %d bytes, gzip, %d",
				tt.say, got, coding, resp.StatusCode, data, size, tt.status)
		}
	}
}

// TestResponseCapAloneConfig: zero and negative are configuration errors
// (ResponseCap panics, NewResponseCap returns the error); the largest cap
// is accepted and bounds nothing a handler can write.
func TestResponseCapAloneConfig(t *testing.T) {
	t.Parallel()
	for _, max := range []int64{0, -1, math.MinInt64} {
		if _, err := boundhttp.NewResponseCap(boundhttp.ResponseCapConfig{MaxBytes: max}); err == nil {
			t.Errorf("NewResponseCap(MaxBytes: %d) = nil error, want one", max)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("ResponseCap(%d) did not panic", max)
				}
			}()
			boundhttp.ResponseCap(max)
		}()
	}
	h := boundhttp.ResponseCap(math.MaxInt64)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, strings.NewReader(strings.Repeat("m", 10000)))
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 200 || w.Body.Len() != 10000 {
		t.Errorf("cap math.MaxInt64: %d, %d bytes; want 200, 10000", w.Code, w.Body.Len())
	}
}

// TestResponseCapModel runs random sequences of writes and flushes through
// the cap into a ResponseRecorder and compares the outcome with a model of
// the documented rule: bytes are held until a flush or more than 4096 of
// them; a write over the cap while holding is a 500, after, an abort; what
// reaches the writer is always a prefix of what was written, never more
// than the cap.
func TestResponseCapModel(t *testing.T) {
	t.Parallel()
	const holdBytes = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	data := text(20 * 10002)
	for iter := range 3000 {
		limit := 1 + rng.Int64N(10000)
		type op struct {
			flush bool
			n     int
		}
		// Sizes are random, or chosen to land the running total one byte
		// either side of the cap or of the held bytes.
		ops := make([]op, 1+rng.IntN(20))
		sum := 0
		for i := range ops {
			d := rng.IntN(3) - 1
			switch k := rng.IntN(10); {
			case k == 0:
				ops[i].flush = true
			case k <= 2 && int(limit)-sum+d >= 0:
				ops[i].n = int(limit) - sum + d
			case k <= 4 && holdBytes-sum+d >= 0:
				ops[i].n = holdBytes - sum + d
			default:
				ops[i].n = rng.IntN(3000)
			}
			sum += ops[i].n
		}
		// The model.
		var want struct {
			rejected, aborted bool
			breachAt          int // index of the op that passes the cap
		}
		holding, held, written := true, 0, 0
		for i, o := range ops {
			if o.flush {
				holding = false
				continue
			}
			if int64(written+o.n) > limit {
				want.rejected, want.aborted, want.breachAt = holding, !holding, i
				break
			}
			if holding && held+o.n <= holdBytes {
				held += o.n
			} else {
				holding = false
			}
			written += o.n
		}
		breached := want.rejected || want.aborted

		mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: limit, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		var firstErr = -1
		var errs []error
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			off := 0
			for i, o := range ops {
				if o.flush {
					w.(http.Flusher).Flush()
					continue
				}
				_, err := w.Write(data[off : off+o.n])
				off += o.n
				if err != nil {
					errs = append(errs, err)
					if firstErr < 0 {
						firstErr = i
					}
				}
			}
		}))
		rec := httptest.NewRecorder()
		panicked := func() (p any) {
			defer func() { p = recover() }()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
			return nil
		}()
		if panicked != nil && panicked != http.ErrAbortHandler {
			t.Fatalf("iteration %d: panic %v", iter, panicked)
		}
		got := rec.Body.Bytes()
		fail := func(what string) {
			t.Fatalf("iteration %d, cap %d, ops %v: %s (model %+v; status %d, %d bytes, panic %v, errors %v)",
				iter, limit, ops, what, want, rec.Code, len(got), panicked, errs)
		}
		switch {
		case want.rejected:
			if rec.Code != 500 || panicked != nil || !bytes.Contains(got, []byte(`"stage":"response"`)) {
				fail("want a 500 problem")
			}
		case want.aborted:
			if panicked != http.ErrAbortHandler || int64(len(got)) > limit || !bytes.HasPrefix(data, got) {
				fail("want an abort with at most the cap, a prefix of the data")
			}
		default:
			if panicked != nil || rec.Code != 200 || !bytes.Equal(got, data[:written]) {
				fail("want 200 and every byte written")
			}
		}
		if breached != (firstErr >= 0) || breached && firstErr != want.breachAt {
			fail("the first write error is not at the write that passed the cap")
		}
		for _, err := range errs {
			var le *limits.Error
			if !errors.As(err, &le) || le.Stage != limits.StageResponse {
				fail("a write error is not of stage response")
			}
		}
	}
}

// TestResponseCapPanicAfterBreachLogged: a handler that panics after its
// write passed the cap (with http.ErrAbortHandler or any other value)
// still gets the breach logged; the panic itself aborts the response.
func TestResponseCapPanicAfterBreachLogged(t *testing.T) {
	t.Parallel()
	for _, v := range []any{http.ErrAbortHandler, "handler gave up"} {
		for _, flush := range []bool{false, true} {
			rec := &logRecorder{}
			s := trapServer(t, 10, func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("12345"))
				if flush {
					w.(http.Flusher).Flush()
				}
				w.Write([]byte("123456"))
				panic(v)
			}, rec)
			s.Config.ErrorLog = log.New(io.Discard, "", 0) // the panic's trace
			if _, _, err := get(t, s.Client().Transport, s.URL); err == nil {
				t.Errorf("panic %v, flushed %v: a clean response, want an error", v, flush)
			}
			s.Close() // the handler has returned
			rec.mu.Lock()
			var aborted []string
			for _, r := range rec.recs {
				r.Attrs(func(a slog.Attr) bool {
					if a.Key == "aborted" {
						aborted = append(aborted, a.Value.String())
					}
					return true
				})
			}
			rec.mu.Unlock()
			if want := fmt.Sprint(flush); len(aborted) != 1 || aborted[0] != want {
				t.Errorf("panic %v, flushed %v: breach records with aborted=%v, want one with %s", v, flush, aborted, want)
			}
		}
	}
}

// TestResponseCapRejectNotCharged: a Reject that writes more than the cap
// (a verbose error page) is the middleware's answer, not the handler's:
// it goes out whole, uncharged and unaborted.
func TestResponseCapRejectNotCharged(t *testing.T) {
	t.Parallel()
	page := strings.Repeat("p", 10000)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{MaxResponseBytes: 10, Logger: slog.New(&logRecorder{}),
		Reject: func(w http.ResponseWriter, r *http.Request, e *limits.Error) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, page)
		}})
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(text(11))
	})))
	defer s.Close()
	resp, body, err := get(t, s.Client().Transport, s.URL)
	if err != nil || resp.StatusCode != 500 || string(body) != page {
		t.Errorf("a Reject writing %d bytes over a cap of 10: %v, %v, %d bytes; want 500 and the whole page", len(page), err, resp, len(body))
	}
}
