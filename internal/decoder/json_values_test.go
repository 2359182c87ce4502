package decoder

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// values returns a document of exactly n values: an array of n-1 zeros
// split into arrays of at most 1000, each array a value too. It is only
// exact when n-1 is a multiple of 1001; other n are built as a flat array.
func flatValues(n int) string {
	if n == 1 {
		return "0"
	}
	return "[" + strings.TrimSuffix(strings.Repeat("0,", n-1), ",") + "]"
}

// TestCheckJSONMaxValuesBoundary pins the count of values: n values pass
// a limit of n, n+1 fail, whatever their depth; zero means the default,
// negative is invalid, math.MaxInt works.
func TestCheckJSONMaxValuesBoundary(t *testing.T) {
	t.Parallel()
	wide := limits.JSON{MaxArrayLen: 1 << 20}
	for _, tt := range []struct {
		name  string
		limit int
		doc   string
		ok    bool
	}{
		{"limit-1 values", 10, flatValues(9), true},
		{"limit values", 10, flatValues(10), true},
		{"limit+1 values", 10, flatValues(11), false},
		{"limit+1 nested", 4, `[[[[[]]]]]`, false},
		{"limit nested", 5, `[[[[[]]]]]`, true},
		{"members count their values", 3, `{"a":1,"b":{"c":2}}`, false},
		{"members within", 4, `{"a":1,"b":{"c":2}}`, true},
		{"one scalar", 1, `"x"`, true},
		{"huge", math.MaxInt, flatValues(1000), true},
		{"zero means the default: default passes", 0, flatValues(limits.DefaultMaxJSONValues), true},
		{"zero means the default: default+1 fails", 0, flatValues(limits.DefaultMaxJSONValues + 1), false},
	} {
		l := wide
		l.MaxValues = tt.limit
		if strings.HasPrefix(tt.name, "zero") {
			l.MaxArrayLen = limits.DefaultMaxJSONValues + 1
		}
		err := checkJSON(tt.doc, l)
		if tt.ok {
			if err != nil {
				t.Errorf("%s: CheckJSON = %v, want nil", tt.name, err)
			}
			continue
		}
		want := tt.limit
		if want == 0 {
			want = limits.DefaultMaxJSONValues
		}
		var e *limits.Error
		if !errors.As(err, &e) || e.Stage != limits.StageJSON || e.Field != "MaxValues" || e.Limit != int64(want) ||
			e.Observed != int64(want)+1 || !errors.Is(err, limits.ErrTooLarge) {
			t.Errorf("%s: CheckJSON = %v, want MaxValues %d observed %d", tt.name, err, want, want+1)
		}
	}
	if _, err := NewJSONChecker(limits.JSON{MaxValues: -1}); err == nil {
		t.Errorf("NewJSONChecker(MaxValues -1) = nil error")
	}
}

// TestCheckJSONMaxObjectsBoundary pins the count of objects, the costliest
// values: n objects pass a limit of n, n+1 fail, at any depth.
func TestCheckJSONMaxObjectsBoundary(t *testing.T) {
	t.Parallel()
	objects := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]" }
	for _, tt := range []struct {
		name  string
		limit int
		doc   string
		ok    bool
	}{
		{"limit-1", 3, objects(2), true},
		{"limit", 3, objects(3), true},
		{"limit+1", 3, objects(4), false},
		{"limit+1 nested", 2, `{"a":{"b":{}}}`, false},
		{"huge", math.MaxInt, objects(1000), true},
		{"zero means the default", 0, objects(limits.DefaultMaxJSONObjects + 1), false},
	} {
		l := limits.JSON{MaxArrayLen: 1 << 20, MaxObjects: tt.limit}
		err := checkJSON(tt.doc, l)
		if tt.ok {
			if err != nil {
				t.Errorf("%s: CheckJSON = %v, want nil", tt.name, err)
			}
			continue
		}
		want := tt.limit
		if want == 0 {
			want = limits.DefaultMaxJSONObjects
		}
		var e *limits.Error
		if !errors.As(err, &e) || e.Field != "MaxObjects" || e.Limit != int64(want) || e.Observed != int64(want)+1 {
			t.Errorf("%s: CheckJSON = %v, want MaxObjects %d observed %d", tt.name, err, want, want+1)
		}
	}
	if _, err := NewJSONChecker(limits.JSON{MaxObjects: -1}); err == nil {
		t.Errorf("NewJSONChecker(MaxObjects -1) = nil error")
	}
}

// emptiesBomb returns size bytes of empty arrays nested within the default
// depth and array limits: [[[],[],...],[[],[],...],...], a document every
// per-array and depth limit accepts.
func emptiesBomb(size int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for outer := 0; b.Len() < size-2000 && outer < limits.DefaultMaxJSONArrayLen; outer++ {
		if outer > 0 {
			b.WriteByte(',')
		}
		b.WriteString("[[]" + strings.Repeat(",[]", 999) + "]")
	}
	b.WriteByte(']')
	return b.Bytes()
}

// heapOf reports the bytes encoding/json allocates to decode doc into any.
func heapOf(t *testing.T, doc []byte) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	return after.TotalAlloc - before.TotalAlloc
}

// chainsBomb returns about size bytes of chains of depth objects nested
// ({"":{"":...0}}) in arrays of 1000, a document every per-array, per-object
// and depth limit accepts; objects are the costliest values to decode.
func chainsBomb(size, depth int) []byte {
	chain := strings.Repeat(`{"":`, depth) + "0" + strings.Repeat("}", depth)
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < size-len(chain)-4; i++ {
		if i%1000 == 0 {
			if i > 0 {
				b.WriteString("],")
			}
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(chain)
	}
	b.WriteString("]]")
	return b.Bytes()
}

// TestCheckJSONBoundsParserHeap pins the trap of a shape check that lets
// through what a parser expands: 4 MiB of empty arrays or of nested
// objects, within every depth, per-array and per-object limit, decode to
// 20 and 65 times their size on the heap. The default limits refuse both.
// Not parallel: it measures the process's allocation.
func TestCheckJSONBoundsParserHeap(t *testing.T) {
	for _, bomb := range []struct {
		name  string
		doc   []byte
		field string
	}{
		{"empty arrays", emptiesBomb(4 << 20), "MaxValues"},
		{"nested objects", chainsBomb(4<<20, 8), "MaxObjects"},
	} {
		heap := heapOf(t, bomb.doc)
		t.Logf("4 MiB of %s: heap %.0f MiB (x%.1f)", bomb.name, float64(heap)/(1<<20), float64(heap)/float64(len(bomb.doc)))
		err := CheckJSON(bytes.NewReader(bomb.doc), limits.JSON{})
		var e *limits.Error
		if !errors.As(err, &e) || e.Field != bomb.field {
			t.Errorf("CheckJSON(4 MiB of %s, default limits) = %v, want %s", bomb.name, err, bomb.field)
		}
	}
}

// TestCheckJSONCostliestAcceptedHeap pins the multiple the limits.JSON doc
// states: the costliest document the default limits accept (as many
// objects as MaxObjects allows, the rest of MaxValues as empty arrays)
// decodes to at most 11 times a 4 MiB body. Not parallel: it measures the
// process's allocation.
func TestCheckJSONCostliestAcceptedHeap(t *testing.T) {
	chain := strings.Repeat(`{"":`, 8) + "0" + strings.Repeat("}", 8) // 8 objects, 9 values
	var b bytes.Buffer
	b.WriteString("[[")
	values, objects := 2, 0
	for i := 0; objects+8 <= limits.DefaultMaxJSONObjects; i++ {
		if i%1000 == 999 {
			b.WriteString("],[")
			values++
		} else if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(chain)
		values, objects = values+9, objects+8
	}
	for i := 0; values < limits.DefaultMaxJSONValues-1; i++ {
		if i%1000 == 999 {
			b.WriteString("],[")
			values++
		} else {
			b.WriteByte(',')
		}
		b.WriteString("[]")
		values++
	}
	b.WriteString("]]")
	most := b.Bytes()
	if err := CheckJSON(bytes.NewReader(most), limits.JSON{}); err != nil {
		t.Fatalf("CheckJSON(the costliest accepted document) = %v, want nil", err)
	}
	heap := heapOf(t, most)
	t.Logf("costliest accepted: %d values, %d objects, %d bytes, heap %.0f MiB", values, objects, len(most), float64(heap)/(1<<20))
	if max := uint64(11 * (4 << 20)); heap > max {
		t.Errorf("the costliest document the default check accepts decodes to %d bytes, want at most %d (11 times a 4 MiB body)", heap, max)
	}
}
