package limits

import (
	"math"
	"reflect"
	"testing"
)

func TestNewInFlightPanics(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{0, -1, math.MinInt64} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewInFlight(%d) did not panic", n)
				}
			}()
			NewInFlight(n)
		}()
	}
}

// TestInFlightExportsNoPlumbing: the accounting core is embedded in
// InFlight, and every exported method of it would be promoted into the
// public API. Users see the capacity, the share of a peer and the gauges,
// nothing that reserves.
func TestInFlightExportsNoPlumbing(t *testing.T) {
	t.Parallel()
	rt := reflect.TypeFor[*InFlight]()
	var got []string
	for i := range rt.NumMethod() {
		got = append(got, rt.Method(i).Name)
	}
	if want := []string{"Cap", "InUse", "Peak", "Share"}; !reflect.DeepEqual(got, want) {
		t.Errorf("(*InFlight) methods = %v, want %v", got, want)
	}
}

// TestInFlightErrorText: the two texts of an inflight refusal, one that may
// fit later and one that never can.
func TestInFlightErrorText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		e    Error
		want string
	}{
		{Error{Stage: StageInFlight, Limit: 1000, Observed: 2}, "limits: inflight: budget busy: needs 2 of limit 1000 bytes"},
		{Error{Stage: StageInFlight, Limit: 1000, Observed: 1001}, "limits: inflight limit exceeded: observed 1001 > limit 1000 bytes"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
