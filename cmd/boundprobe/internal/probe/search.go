package probe

import (
	"context"
)

// bracketStart is the first size of the bracketing after the smallest body;
// each following size is four times the previous one.
const bracketStart = 1 << 10

// A trial is one body sent and what came back.
type trial struct {
	body   *body
	answer *Answer
}

// A searchResult is the outcome of one search.
type searchResult struct {
	// accepted is the largest accepted trial; nil when even the smallest
	// body was refused.
	accepted *trial
	// refused is the smallest refused trial; nil when no body up to the
	// largest size was refused.
	refused *trial
	// requests is the number of bodies sent.
	requests int
}

// exact reports whether the ceiling is known to the byte: the body one
// byte (decoded) larger than the largest accepted one was refused.
func (r *searchResult) exact() bool {
	return r.accepted != nil && r.refused != nil && r.refused.body.Decoded == r.accepted.body.Decoded+1
}

// search finds the largest decoded size in [lo, hi] whose body try
// accepts, with at most budget calls of try (budget at least 1): the
// smallest body first (a refusal there ends the search), then sizes from
// bracketStart up in powers of four, capped at hi, until one is refused,
// then bisection of the bracket while budget lasts. It assumes that a body
// refused at size n is refused at every larger size. An error from try
// (the target unreachable) ends the search.
func search(ctx context.Context, lo, hi int64, budget int, try func(context.Context, int64) (*trial, error)) (*searchResult, error) {
	r := &searchResult{}
	step := func(n int64) (bool, error) {
		t, err := try(ctx, n)
		if err != nil {
			return false, err
		}
		r.requests++
		if t.answer.Refused() {
			r.refused = t
			return false, nil
		}
		r.accepted = t
		return true, nil
	}
	if _, err := step(lo); err != nil || r.refused != nil {
		return r, err
	}
	// Bracket: the loop ends at hi, or at the first refusal, or when the
	// budget is spent; each turn at least quadruples the size.
	for next := int64(bracketStart); r.refused == nil && r.accepted.body.Decoded < hi && r.requests < budget; next *= 4 {
		if next <= r.accepted.body.Decoded {
			continue
		}
		if next > hi {
			next = hi
		}
		if _, err := step(next); err != nil {
			return r, err
		}
	}
	// Bisect: each turn halves the gap between the accepted and the
	// refused size.
	for r.refused != nil && r.refused.body.Decoded-r.accepted.body.Decoded > 1 && r.requests < budget {
		a, b := r.accepted.body.Decoded, r.refused.body.Decoded
		if _, err := step(a + (b-a)/2); err != nil {
			return r, err
		}
	}
	return r, nil
}
