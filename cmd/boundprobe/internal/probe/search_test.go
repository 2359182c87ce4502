package probe

import (
	"context"
	"net/http"
	"testing"
)

// oracle returns a try function that accepts bodies of at most ceiling
// bytes, and counts the calls.
func oracle(ceiling int64, calls *int) func(context.Context, int64) (*trial, error) {
	return func(_ context.Context, n int64) (*trial, error) {
		*calls++
		a := &Answer{Outcome: OutcomeAnswered, Status: http.StatusAccepted}
		if n > ceiling {
			a.Status = http.StatusRequestEntityTooLarge
		}
		return &trial{body: &body{Decoded: n, Wire: n}, answer: a}, nil
	}
}

// TestSearchExact checks that with the default budget and largest size
// every ceiling is found to the byte, within 40 requests, and that the
// request counts the package documentation gives hold.
func TestSearchExact(t *testing.T) {
	t.Parallel()
	const hi = 64 << 20
	min := shape{json: true}.minSize()
	for _, tc := range []struct {
		ceiling int64
		want    int // requests, 0 for "at most 40"
	}{
		{min, 0}, {min + 1, 0}, {1000, 0}, {1024, 0}, {100 << 10, 0},
		{1 << 20, 29}, {4 << 20, 32}, {16 << 20, 0}, {hi - 1, 36}, {hi / 4 * 3, 0},
	} {
		var calls int
		r, err := search(context.Background(), min, hi, 40, oracle(tc.ceiling, &calls))
		if err != nil {
			t.Fatal(err)
		}
		if !r.exact() || r.accepted.body.Decoded != tc.ceiling || r.requests != calls || r.requests > 40 {
			t.Errorf("ceiling %d: accepted %+v refused %+v exact %v, %d requests (%d calls)",
				tc.ceiling, r.accepted.body, r.refused.body, r.exact(), r.requests, calls)
		}
		if tc.want != 0 && r.requests != tc.want {
			t.Errorf("ceiling %d: %d requests, want %d", tc.ceiling, r.requests, tc.want)
		}
	}
}

// TestSearchEdges checks a ceiling below the smallest body, none up to the
// largest size, and a budget too small to be exact (an honest interval).
func TestSearchEdges(t *testing.T) {
	t.Parallel()
	var calls int
	r, _ := search(context.Background(), 100, 1<<20, 40, oracle(99, &calls))
	if r.accepted != nil || r.refused.body.Decoded != 100 || r.requests != 1 {
		t.Errorf("ceiling below the smallest body: accepted %v, refused %+v, %d requests", r.accepted, r.refused.body, r.requests)
	}
	r, _ = search(context.Background(), 100, 1<<20, 40, oracle(1<<30, &calls))
	if r.refused != nil || r.accepted.body.Decoded != 1<<20 || r.exact() || r.requests != 7 {
		t.Errorf("no ceiling up to 1 MiB: accepted %+v, refused %v, %d requests, want 7", r.accepted.body, r.refused, r.requests)
	}
	for budget := 1; budget <= 30; budget++ {
		calls = 0
		const ceiling = 1 << 20
		r, _ = search(context.Background(), 100, 64<<20, budget, oracle(ceiling, &calls))
		if r.requests != calls || r.requests > budget {
			t.Errorf("budget %d: %d requests", budget, calls)
		}
		lo := r.accepted.body.Decoded
		if lo > ceiling || r.refused != nil && r.refused.body.Decoded <= ceiling {
			t.Errorf("budget %d: interval [%d, %v] does not hold the ceiling %d", budget, lo, r.refused, ceiling)
		}
		if r.exact() != (budget >= 29) {
			t.Errorf("budget %d: exact %v", budget, r.exact())
		}
	}
}
