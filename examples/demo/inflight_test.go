package main

import (
	"bytes"
	"testing"
)

// TestInFlightDemo: the stalled brotli connections cost the naive server
// hundreds of MiB and the budgeted one no more than its cap plus net/http's
// per-connection memory (64 KiB each, generously). Sabotage: without
// InFlight in the bounded server's config its growth matches the naive one.
func TestInFlightDemo(t *testing.T) {
	var out bytes.Buffer
	naive, bounded, err := inflight(&out)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if naive < 256<<20 {
		t.Errorf("naive server grew by %d bytes, want hundreds of MiB", naive)
	}
	if limit := int64(inflightCap + stalls*64<<10); bounded > limit {
		t.Errorf("budgeted server grew by %d bytes, want at most %d", bounded, limit)
	}
}
