package boundhttp_test

import (
	"bytes"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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
