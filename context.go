package boundhttp

import (
	"context"

	"github.com/boundhttp/boundhttp/limits"
)

type budgetKey struct{}

// WithBudget returns a copy of ctx that carries b. A [Transport] uses it,
// instead of its own Budget, for requests made with that context, so one
// client can serve tools with different needs. b is validated when the
// request is made.
func WithBudget(ctx context.Context, b limits.Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the budget [WithBudget] put in ctx, and whether there
// was one.
func BudgetFrom(ctx context.Context) (limits.Budget, bool) {
	b, ok := ctx.Value(budgetKey{}).(limits.Budget)
	return b, ok
}

type streamingKey struct{}

// WithStreaming returns a copy of ctx that selects streaming mode: a
// [Transport] hands the body of a request made with that context to the
// caller as a bounded decoding reader, as if its Streaming field were set,
// so that one client can fetch small documents whole and stream a large
// download. The budget still applies in full.
func WithStreaming(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamingKey{}, true)
}

// StreamingFrom reports whether ctx carries [WithStreaming].
func StreamingFrom(ctx context.Context) bool {
	v, _ := ctx.Value(streamingKey{}).(bool)
	return v
}
