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
