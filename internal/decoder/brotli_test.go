package decoder

import (
	"errors"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

func TestBrotliLargeWindow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		wbits byte
		limit int64
		stage string
	}{
		{16, 0, ""},        // small large-window streams are no bigger than standard ones
		{24, 0, ""},        // 16 MiB: standard windows are always allowed
		{24, 1 << 20, ""},  // even under a smaller MaxWindowBytes
		{25, 0, "window"},  // 32 MiB > default 8 MiB
		{25, 32 << 20, ""}, // allowed when the budget says so
		{26, 32 << 20, "window"},
		{30, 0, "window"},
	} {
		_, err := decodeAll(t, largeWindowEmpty(tt.wbits), "br", limits.Budget{MaxWindowBytes: tt.limit})
		if stageOf(err) != tt.stage {
			t.Errorf("ReadAll(br large window 1<<%d, limit %d) = %v, want stage %q", tt.wbits, tt.limit, err, tt.stage)
		}
		var e *limits.Error
		if errors.As(err, &e) && (e.Observed != 1<<tt.wbits || !e.Declared) {
			t.Errorf("ReadAll(br large window 1<<%d) = %+v, want declared %d", tt.wbits, e, 1<<tt.wbits)
		}
	}
}

// TestBrotliStandardWindowAlwaysAllowed: the 16 MiB window the brotli tool
// writes by default decodes under a budget whose MaxWindowBytes is smaller.
func TestBrotliStandardWindowAlwaysAllowed(t *testing.T) {
	t.Parallel()
	data := text(1 << 20)
	body := encode(t, "br", data) // andybalholm's encoder uses a 4 MiB window (lgwin 22)
	if _, err := decodeAll(t, body, "br", limits.Budget{MaxWindowBytes: 1024}); err != nil {
		t.Errorf("ReadAll(standard br, MaxWindowBytes 1024) = %v, want nil", err)
	}
}
