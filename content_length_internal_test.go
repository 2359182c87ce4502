package boundhttp

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestIsDecimalOnlyAcceptsCanonicalForm: a Content-Length header is shared
// with the handler only when it is the length as strconv writes it; a sign,
// a leading zero, spaces or another number are not it.
func TestIsDecimalOnlyAcceptsCanonicalForm(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int64
		want bool
	}{
		{"0", 0, true},
		{"00", 0, false},
		{"", 0, false},
		{"5", 5, true},
		{"05", 5, false},
		{"+5", 5, false},
		{"-5", -5, false},
		{"5", -5, false},
		{"15", 5, false},
		{"51", 5, false},
		{"5", 15, false},
		{"4096", 14096, false},
		{"4096", 4096, true},
		{"4097", 4096, false},
		{"9223372036854775807", math.MaxInt64, true},
		{"9223372036854775806", math.MaxInt64, false},
		{"19223372036854775807", math.MaxInt64, false},
		{"922337203685477580", math.MaxInt64, false},
		{"9999999999999999999", math.MaxInt64, false},
		{"4o96", 4096, false},
		{"409:", 4100, false}, // the byte after '9', read as a digit 10, would make 4100
		{"40/6", 4006, false}, // '/' the one before '0'
		{"4096 ", 4096, false},
		{" 4096", 4096, false},
	} {
		if got := isDecimal(c.s, c.n); got != c.want {
			t.Errorf("isDecimal(%q, %d) = %v, want %v", c.s, c.n, got, c.want)
		}
	}
}

// deadlineWriter is someone else's writer that offers SetReadDeadline.
type deadlineWriter struct{ http.ResponseWriter }

func (deadlineWriter) SetReadDeadline(time.Time) error { return nil }

// TestServersDeadlineVerdictFollowsWriterType: the watchdog is trusted only
// behind net/http's own writer; the verdict kept for the last writer type
// must not be handed to a request whose writer is of another type.
func TestServersDeadlineVerdictFollowsWriterType(t *testing.T) {
	var got []bool
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, serversDeadline(w), serversDeadline(deadlineWriter{w}), serversDeadline(w))
	}))
	defer s.Close()
	for range 2 {
		resp, err := http.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	want := []bool{true, false, true, true, false, true}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("verdicts %v, want %v", got, want)
		}
	}
}
