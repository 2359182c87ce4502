package main

import (
	"bytes"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// TestInFlightDemo: the stalled brotli connections cost the naive server
// hundreds of MiB and the budgeted one no more than its cap plus net/http's
// per-connection memory (64 KiB each, generously). Sabotage: without
// InFlight in the bounded server's config its growth matches the naive one;
// without the default in-flight budget, so does the default server's.
func TestInFlightDemo(t *testing.T) {
	var out bytes.Buffer
	naive, bounded, defaulted, err := inflight(&out)
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
	if limit := int64(boundhttp.DefaultInFlightBytes + stalls*64<<10); defaulted > limit {
		t.Errorf("server with the defaults grew by %d bytes, want at most %d (DefaultServerInFlight)", defaulted, limit)
	}
}
