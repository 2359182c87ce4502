package limits

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		b     Budget
		field string // "" means valid
	}{
		{"zero", Budget{}, ""},
		{"all set", Budget{MaxWireBytes: 1, MaxDecodedBytes: 1, MaxLayers: 1, MaxWindowBytes: 1, MaxRatio: 1, Timeout: 1}, ""},
		{"huge", Budget{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: math.MaxInt64, MaxLayers: math.MaxInt, MaxWindowBytes: math.MaxInt64, MaxRatio: 1e300, Timeout: math.MaxInt64}, ""},
		{"negative wire", Budget{MaxWireBytes: -1}, "MaxWireBytes"},
		{"negative decoded", Budget{MaxDecodedBytes: -1}, "MaxDecodedBytes"},
		{"negative layers", Budget{MaxLayers: -1}, "MaxLayers"},
		{"negative window", Budget{MaxWindowBytes: -1}, "MaxWindowBytes"},
		{"negative ratio", Budget{MaxRatio: -1}, "MaxRatio"},
		{"ratio below one", Budget{MaxRatio: 0.5}, "MaxRatio"},
		{"ratio NaN", Budget{MaxRatio: math.NaN()}, "MaxRatio"},
		{"ratio Inf", Budget{MaxRatio: math.Inf(1)}, "MaxRatio"},
		{"negative timeout", Budget{Timeout: -time.Second}, "Timeout"},
		{"negative runes", Budget{MaxDecodedRunes: -1}, "MaxDecodedRunes"},
		{"most negative", Budget{MaxWireBytes: math.MinInt64}, "MaxWireBytes"},
	}
	for _, tt := range tests {
		err := tt.b.Validate()
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
		case tt.field != "" && (err == nil || !strings.Contains(err.Error(), "Budget."+tt.field)):
			t.Errorf("%s: Validate() = %v, want an error naming %s", tt.name, err, tt.field)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	got := Budget{}.WithDefaults()
	want := Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20, MaxLayers: 2, MaxWindowBytes: 8 << 20}
	if got != want {
		t.Errorf("Budget{}.WithDefaults() = %+v, want %+v", got, want)
	}
	set := Budget{MaxWireBytes: 1, MaxDecodedBytes: 2, MaxLayers: 3, MaxWindowBytes: 4, MaxRatio: 5, MaxDecodedRunes: 7, Timeout: 6}
	if got := set.WithDefaults(); got != set {
		t.Errorf("WithDefaults(%+v) = %+v, want it unchanged", set, got)
	}
}

func TestCheckContentLength(t *testing.T) {
	t.Parallel()
	const limit = 1000
	b := Budget{MaxWireBytes: limit}
	tests := []struct {
		n    int64
		fail bool
	}{
		{-1, false}, {0, false}, {limit - 1, false}, {limit, false}, {limit + 1, true}, {math.MaxInt64, true},
	}
	for _, tt := range tests {
		err := b.CheckContentLength(tt.n)
		if (err != nil) != tt.fail {
			t.Errorf("CheckContentLength(%d) = %v, want failure %v", tt.n, err, tt.fail)
			continue
		}
		if err == nil {
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Stage != StageWire || e.Limit != limit || e.Observed != tt.n || !e.Declared {
			t.Errorf("CheckContentLength(%d) = %#v, want wire stage, limit %d, declared %d", tt.n, err, limit, tt.n)
		}
	}
	// Zero means the default, not unlimited.
	if err := (Budget{}).CheckContentLength(DefaultMaxWireBytes + 1); err == nil {
		t.Errorf("Budget{}.CheckContentLength(default+1) = nil, want wire error")
	}
}
