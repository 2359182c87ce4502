package decoder

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestLimitArithmeticNearMaxInt64 pins the trap "arithmetic on limits":
// limit+1 and limit-used+1 wrapped at math.MaxInt64 and panicked with "slice
// bounds out of range". Every limit from 0 to math.MaxInt64 gives a working
// Reader; N passes a limit of N, N-1 fails it.
func TestLimitArithmeticNearMaxInt64(t *testing.T) {
	t.Parallel()
	const n = 3000 // body length in bytes and characters
	data := text(n)
	for _, tt := range []struct {
		v     int64
		stage string // "" passes; "invalid" means Validate refuses
	}{
		{0, ""}, // the default, far above n
		{-1, "invalid"},
		{n - 1, "?"}, // the field's own stage
		{n, ""},
		{n + 1, ""},
		{math.MaxInt64 - 1, ""},
		{math.MaxInt64, ""},
	} {
		for _, f := range []struct {
			field string
			stage string
			set   func(*limits.Budget, int64)
		}{
			{"MaxWireBytes", "wire", func(b *limits.Budget, v int64) { b.MaxWireBytes = v; b.MaxDecodedBytes = math.MaxInt64 }},
			{"MaxDecodedBytes", "decoded", func(b *limits.Budget, v int64) { b.MaxDecodedBytes = v; b.MaxWireBytes = math.MaxInt64 }},
			{"MaxDecodedRunes", "runes", func(b *limits.Budget, v int64) { b.MaxDecodedRunes = v }},
		} {
			for _, c := range []string{"identity", "gzip"} {
				var b limits.Budget
				f.set(&b, tt.v)
				body := data
				if c == "gzip" {
					if f.field == "MaxWireBytes" && tt.v > 0 && tt.v < math.MaxInt64-1 {
						continue // the wire length of gzip is not n
					}
					body = encode(t, c, data)
				}
				want := tt.stage
				if want == "?" {
					want = f.stage
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							t.Errorf("%s=%d, %s: ReadAll panicked: %v", f.field, tt.v, c, p)
						}
					}()
					got, err := decodeAll(t, body, c, b)
					if want == "invalid" {
						if err == nil || !strings.Contains(err.Error(), f.field) {
							t.Errorf("%s=%d: ReadAll = %v, want a Validate error naming the field", f.field, tt.v, err)
						}
						return
					}
					if stageOf(err) != want {
						t.Errorf("%s=%d, %s: ReadAll = %v, want stage %q", f.field, tt.v, c, err, want)
					}
					if err == nil && !bytes.Equal(got, data) {
						t.Errorf("%s=%d, %s: ReadAll returned different bytes", f.field, tt.v, c)
					}
					if want == "invalid" {
						return
					}
					// Streaming with one large buffer.
					d, err := NewReader(bytes.NewReader(body), c, b)
					if err != nil {
						t.Fatal(err)
					}
					out, err := io.ReadAll(d)
					if stageOf(err) != want || err == nil && !bytes.Equal(out, data) {
						t.Errorf("%s=%d, %s: streaming = %d bytes, %v, want stage %q", f.field, tt.v, c, len(out), err, want)
					}
				}()
			}
		}
	}
}

// TestRatioLimitNearMaxFloat: a huge MaxRatio is valid and reports a
// saturated Limit rather than an undefined float-to-int conversion.
func TestRatioLimitNearMaxFloat(t *testing.T) {
	t.Parallel()
	data := make([]byte, 64<<10)
	for _, r := range []float64{1e300, math.MaxFloat64, float64(math.MaxInt64)} {
		got, err := decodeAll(t, encode(t, "gzip", data), "gzip", limits.Budget{MaxRatio: r})
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("MaxRatio %g: ReadAll = %d bytes, %v, want the body", r, len(got), err)
		}
	}
}

// TestJSONLimitArithmeticNearMaxInt pins the trap "arithmetic on limits" for
// limits.JSON: MaxStringLen+1 wrapped at math.MaxInt and panicked in
// CheckJSON.
func TestJSONLimitArithmeticNearMaxInt(t *testing.T) {
	t.Parallel()
	const n = 40 // string length, array length, members and depth of the documents
	docs := map[string]string{
		"MaxStringLen":     `{"` + strings.Repeat("k", n) + `":"` + strings.Repeat("v", n) + `"}`,
		"MaxArrayLen":      `[` + strings.Repeat("1,", n-1) + `1]`,
		"MaxObjectMembers": `{` + strings.TrimSuffix(strings.Repeat(`"a":1,`, n), ",") + `}`,
		"MaxDepth":         strings.Repeat("[", n) + strings.Repeat("]", n),
	}
	set := map[string]func(*limits.JSON, int){
		"MaxStringLen":     func(l *limits.JSON, v int) { l.MaxStringLen = v },
		"MaxArrayLen":      func(l *limits.JSON, v int) { l.MaxArrayLen = v },
		"MaxObjectMembers": func(l *limits.JSON, v int) { l.MaxObjectMembers = v },
		"MaxDepth":         func(l *limits.JSON, v int) { l.MaxDepth = v },
	}
	for field, doc := range docs {
		for _, tt := range []struct {
			v    int
			want string
		}{{0, ""}, {-1, "invalid"}, {n - 1, "json"}, {n, ""}, {n + 1, ""}, {math.MaxInt - 1, ""}, {math.MaxInt, ""}} {
			var l limits.JSON
			set[field](&l, tt.v)
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s=%d: CheckJSON panicked: %v", field, tt.v, p)
					}
				}()
				err := CheckJSON(strings.NewReader(doc), l)
				switch {
				case tt.want == "invalid":
					if err == nil || !strings.Contains(err.Error(), field) {
						t.Errorf("%s=%d: CheckJSON = %v, want a Validate error naming the field", field, tt.v, err)
					}
				case stageOf(err) != tt.want:
					t.Errorf("%s=%d: CheckJSON = %v, want stage %q", field, tt.v, err, tt.want)
				}
			}()
		}
	}
}

// TestInFlightMaxIntBudget: a whole-body read under a budget whose decoded
// limit is near MaxInt64 (the "no practical limit" a caller may write)
// still charges its body and its decoders: a body larger than Cap is
// refused, a decoder larger than Cap fails at once.
func TestInFlightMaxIntBudget(t *testing.T) {
	t.Parallel()
	data := text(4 << 20)
	for _, max := range []int64{math.MaxInt64, math.MaxInt64 - 1000, math.MaxInt64 - 64<<10} {
		b := limits.Budget{MaxWireBytes: math.MaxInt64, MaxDecodedBytes: max}
		for _, c := range []string{"identity", "gzip"} {
			f := limits.NewInFlight(1 << 20)
			got, err := ReadAll(bytes.NewReader(layered(t, data, splitCodings(c)...)), c, b, WithInFlight(f))
			var e *limits.Error
			if !errors.As(err, &e) || e.Stage != limits.StageInFlight {
				t.Errorf("max %d, %s: ReadAll(4 MiB, 1 MiB in flight) = %d bytes, %v, want an inflight error", max, c, len(got), err)
			}
			if f.InUse() != 0 || f.Peak() > f.Cap() {
				t.Errorf("max %d, %s: InUse() = %d, Peak() = %d, want 0 and within %d", max, c, f.InUse(), f.Peak(), f.Cap())
			}
			tiny := limits.NewInFlight(32 << 10) // below FlateState
			_, err = ReadAll(bytes.NewReader(layered(t, data, "gzip")), "gzip", b, WithInFlight(tiny))
			if !errors.As(err, &e) || e.Stage != limits.StageInFlight || e.Observed <= e.Limit {
				t.Errorf("max %d: gzip through a budget below its state = %v, want an inflight error that could never fit", max, err)
			}
		}
	}
}
