// Package mcptest holds the result stores the MCP adapters' tests share.
package mcptest

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// ExpiringStore is a store whose results all read as expired once Expired
// is set, as a store past its time to live answers.
type ExpiringStore struct {
	mcpcore.ResultStore
	Expired atomic.Bool
}

// Page returns ErrExpiredResult once Expired is set, else the store's page.
func (s *ExpiringStore) Page(ctx context.Context, id string, k int) (string, string, int, error) {
	if s.Expired.Load() {
		return "", "", 0, fmt.Errorf("%w (results are kept for %v)", mcpcore.ErrExpiredResult, s.TTL())
	}
	return s.ResultStore.Page(ctx, id, k)
}

// CountingStore counts the results put into its store.
type CountingStore struct {
	mcpcore.ResultStore
	puts atomic.Int64
}

// Put counts the put and hands it to the store.
func (s *CountingStore) Put(ctx context.Context, id, mimeType string, pages []string) error {
	s.puts.Add(1)
	return s.ResultStore.Put(ctx, id, mimeType, pages)
}

// Puts returns how many results were put.
func (s *CountingStore) Puts() int64 { return s.puts.Load() }
