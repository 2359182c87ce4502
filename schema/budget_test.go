package schema

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

func TestCheckBudget(t *testing.T) {
	t.Parallel()
	schemaWith := func(maxURLs int) []byte { return []byte(strings.Replace(searchTool, "%d", itoa(maxURLs), 1)) }
	worst := func(maxURLs int) int64 {
		n, err := RequestWorstCase("search", schemaWith(maxURLs), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	b := limits.Budget{MaxWireBytes: 1 << 20, MaxDecodedBytes: 1 << 20}
	if err := CheckBudget(worst(20), b, DefaultHeadroom); err != nil {
		t.Errorf("20 URLs under 1 MiB: %v, want nil", err)
	}
	// A cap raised past what the transport carries fails.
	err := CheckBudget(worst(100), b, DefaultHeadroom)
	if err == nil || !strings.Contains(err.Error(), itoa64(worst(100))) || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("100 URLs under 1 MiB: %v, want an error naming %d and 1048576", err, worst(100))
	}
	// A transport tightened beneath the cap fails too.
	tight := limits.Budget{MaxWireBytes: 512 << 10, MaxDecodedBytes: 1 << 20}
	if err := CheckBudget(worst(20), tight, DefaultHeadroom); err == nil || !strings.Contains(err.Error(), "MaxWireBytes of 524288") {
		t.Errorf("20 URLs, wire 512 KiB: %v, want MaxWireBytes error", err)
	}
	// The boundary: exactly fitting with headroom passes, one byte less fails.
	w := worst(20)
	need := w + (w+3)/4
	if err := CheckBudget(w, limits.Budget{MaxWireBytes: need, MaxDecodedBytes: need}, 0.25); err != nil {
		t.Errorf("limit = need %d: %v", need, err)
	}
	if err := CheckBudget(w, limits.Budget{MaxWireBytes: need - 1, MaxDecodedBytes: need}, 0.25); err == nil {
		t.Errorf("limit = need-1: nil error")
	}
	if err := CheckBudget(w, limits.Budget{MaxDecodedRunes: w}, 0.25); err == nil {
		t.Errorf("character cap below the request: nil error")
	}
	if err := CheckBudget(w, b, -1); err == nil {
		t.Errorf("negative headroom: nil error")
	}
}

// TestToolReportCheckIsCheckBudget: the two names are one check, a
// report's Check being CheckBudget of its worst request with the tool's
// name in front, at every limit of the boundary table (0 is the default
// 4 MiB, negative is invalid) and for the headroom CheckBudget refuses.
func TestToolReportCheckIsCheckBudget(t *testing.T) {
	t.Parallel()
	r, err := AuditTool("search", []byte(strings.Replace(searchTool, "%d", "20", 1)), Options{})
	if err != nil || len(r.Findings) != 0 {
		t.Fatal(r.Findings, err)
	}
	need := r.WorstRequest + (r.WorstRequest+3)/4
	for _, tt := range []struct {
		limit    int64
		headroom float64
		fits     bool
	}{
		{0, 0.25, true}, {-1, 0.25, false}, {need - 1, 0.25, false}, {need, 0.25, true}, {need + 1, 0.25, true},
		{math.MaxInt64, 0.25, true}, {need, -0.5, false}, {need, math.NaN(), false},
	} {
		b := limits.Budget{MaxWireBytes: tt.limit, MaxDecodedBytes: tt.limit}
		direct, checked := CheckBudget(r.WorstRequest, b, tt.headroom), r.Check(b, tt.headroom)
		if (direct == nil) != tt.fits || (checked == nil) != tt.fits {
			t.Errorf("limit %d, headroom %v: CheckBudget %v, Check %v; want fits %v", tt.limit, tt.headroom, direct, checked, tt.fits)
			continue
		}
		if direct != nil && checked.Error() != `tool "search": `+direct.Error() {
			t.Errorf("limit %d: Check says %q, CheckBudget %q", tt.limit, checked, direct)
		}
	}
}

// TestToolReportCheckEchoesName pins the trap of quoting a peer's string
// whole: a tool whose bounded input does not fit the budget was named in
// the error with %q of its full name, a megabyte of text in a log record
// when a server chose such a name. The name is cut as limits.Echo cuts it,
// in both errors of Check.
func TestToolReportCheckEchoesName(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("n", 1<<20)
	for _, doc := range []string{`{"type":"string","maxLength":100000}`, `{"type":"string"}`} {
		r, err := AuditTool(name, []byte(doc), Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = r.Check(limits.Budget{MaxWireBytes: 1024, MaxDecodedBytes: 1024}, DefaultHeadroom)
		if err == nil || len(err.Error()) > 2048 {
			t.Errorf("Check(%s) error is %d bytes, want an error of at most 2048", doc, len(fmt.Sprint(err)))
		}
	}
}

// TestCheckBudgetRefusesNaNHeadroom pins the trap of "headroom < 0" as the
// only check: NaN passes it, and float64(worst)*NaN converted to int64 is
// whatever the platform makes of it (0 on arm64, so the headroom vanished
// and a request that fills the budget passed; math.MinInt64 on amd64, an
// error that claimed a need of 2^63-1 bytes). Infinite headroom likewise.
func TestCheckBudgetRefusesNaNHeadroom(t *testing.T) {
	t.Parallel()
	b := limits.Budget{MaxWireBytes: 1000, MaxDecodedBytes: 1000}
	for _, h := range []float64{math.NaN(), math.Inf(1)} {
		err := CheckBudget(1000, b, h)
		if err == nil || !strings.Contains(err.Error(), "invalid headroom") {
			t.Errorf("CheckBudget(1000, 1000, %v) = %v, want an invalid headroom error", h, err)
		}
	}
	// A headroom that takes the need past 2^63 is a need that fits nothing.
	if err := CheckBudget(1<<40, limits.Budget{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: math.MaxInt64}, 1e10); err == nil {
		t.Errorf("CheckBudget(2^40 with headroom 1e10, limits 2^63-1) = nil")
	}
}
