package limits

import (
	"errors"
	"testing"
)

// TestStageResponse pins the response stage: its name (part of the problem
// documents and logs), its sentinel and its error text.
func TestStageResponse(t *testing.T) {
	t.Parallel()
	if StageResponse != "response" {
		t.Errorf("StageResponse = %q, want %q", StageResponse, "response")
	}
	var err error = &Error{Stage: StageResponse, Limit: 100, Observed: 101}
	for _, s := range []error{ErrTooLarge, ErrMalformed, ErrUnsupported, ErrTimeout} {
		if got := errors.Is(err, s); got != (s == ErrTooLarge) {
			t.Errorf("errors.Is(response error, %v) = %v, want %v", s, got, s == ErrTooLarge)
		}
	}
	for _, tt := range []struct {
		e    *Error
		want string
	}{
		{&Error{Stage: StageResponse, Limit: 100, Observed: 101}, "limits: response limit exceeded: observed 101 > limit 100 bytes"},
		{&Error{Stage: StageResponse, Limit: 100, Observed: 5000, Declared: true}, "limits: response limit exceeded: declared 5000 > limit 100 bytes"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
