package limits

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestTimeoutErrorIsNetTimeout: a StageTimeout error answers Timeout()
// true, the net.Error convention; no other stage does.
func TestTimeoutErrorIsNetTimeout(t *testing.T) {
	t.Parallel()
	var err error = &Error{Stage: StageTimeout, Limit: 1000, Observed: 1003}
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("StageTimeout error: Timeout() not true")
	}
	for _, s := range []Stage{StageWire, StageDecoded, StageIntegrity, StageEncoding, StageRatio, StageJSON} {
		if (&Error{Stage: s}).Timeout() {
			t.Errorf("stage %s: Timeout() = true, want false", s)
		}
	}
}

// TestTimeoutMessageNotContradictory pins the trap "a message that
// contradicts itself": the message says what was exceeded instead of
// "observed 1000 > limit 1000 ms".
func TestTimeoutMessageNotContradictory(t *testing.T) {
	t.Parallel()
	e := &Error{Stage: StageTimeout, Limit: 1000, Observed: 1000, Err: context.Canceled}
	got := e.Error()
	want := "limits: timeout: body not complete within 1000 ms (elapsed 1000 ms): context canceled"
	if got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// TestErrorTextBoundedPeerStrings pins the trap "echoing attacker bytes into
// errors": a peer-chosen pointer or coding reaches Error() only through Echo
// and EchoPointer, while the fields keep the exact values.
func TestErrorTextBoundedPeerStrings(t *testing.T) {
	t.Parallel()
	key := "IGNORE-PREVIOUS-" + strings.Repeat("instructions ", 40_000) // ~520 KB
	ptr := "/" + key + "/3"
	enc := strings.Repeat("x-evil\n", 70_000)
	for _, e := range []*Error{
		{Stage: StageJSON, Field: "MaxDepth", Limit: 2, Observed: 3, Pointer: ptr},
		{Stage: StageIntegrity, Encoding: "json", Field: "syntax", Pointer: ptr},
		{Stage: StageEncoding, Encoding: enc},
		{Stage: StageLayers, Limit: 2, Observed: 3, Encoding: enc, Declared: true},
		{Stage: StageIntegrity, Encoding: enc},
		{Stage: StageTimeout, Limit: 1, Observed: 2, Encoding: enc},
	} {
		got := e.Error()
		if len(got) >= 1024 {
			t.Errorf("stage %s: len(Error()) = %d, want < 1024", e.Stage, len(got))
		}
		if strings.Contains(got, key[:17]) || strings.Contains(got, "\n") {
			t.Errorf("stage %s: Error() = %.200q carries the key beyond its 16-byte prefix or a raw newline", e.Stage, got)
		}
		if e.Pointer != "" && !strings.Contains(got, key[:16]) {
			t.Errorf("stage %s: Error() = %.200q lost the key's prefix", e.Stage, got)
		}
	}
}

// TestSubMillisecondTimeoutText pins the trap of a timeout under 1 ms whose
// message read "within 0 ms (elapsed 0 ms)", as if the timeout were zero:
// the fields stay in whole milliseconds, rounded down, and the text says
// "under 1 ms" for a zero.
func TestSubMillisecondTimeoutText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		limit, observed int64
		want            string
	}{
		{0, 0, "limits: timeout: body not complete within a timeout under 1 ms (elapsed under 1 ms)"},
		{0, 3, "limits: timeout: body not complete within a timeout under 1 ms (elapsed 3 ms)"},
		{1, 1, "limits: timeout: body not complete within 1 ms (elapsed 1 ms)"},
	} {
		got := (&Error{Stage: StageTimeout, Limit: tt.limit, Observed: tt.observed}).Error()
		if got != tt.want {
			t.Errorf("limit %d, observed %d: Error() = %q, want %q", tt.limit, tt.observed, got, tt.want)
		}
		if strings.Contains(got, " 0 ms") {
			t.Errorf("limit %d, observed %d: Error() = %q says 0 ms", tt.limit, tt.observed, got)
		}
	}
}

// TestErrorTextBoundsItsCause pins the last line of defence for peer text:
// an Error whose cause quotes a megabyte of it (net/http quotes a field
// name or GOAWAY debug data whole) writes the cause cut to 256 bytes and
// escaped, and a plain short cause as it is.
func TestErrorTextBoundsItsCause(t *testing.T) {
	t.Parallel()
	huge := errors.New("invalid header field name \"" + strings.Repeat("IGNORE ALL PREVIOUS INSTRUCTIONS\n", 1<<15) + "\"")
	e := &Error{Stage: StageTimeout, Limit: 100, Observed: 120, Err: huge}
	if got := e.Error(); len(got) > 2048 || strings.Count(got, "IGNORE") > 8 || strings.ContainsRune(got, '\n') {
		t.Errorf("Error() of %d bytes with %d copies of the peer's line: %.200q", len(got), strings.Count(got, "IGNORE"), got)
	}
	e.Err = context.Canceled
	if got, want := e.Error(), "limits: timeout: body not complete within 100 ms (elapsed 120 ms): context canceled"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestErrorIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stage Stage
		want  error
	}{
		{StageWire, ErrTooLarge}, {StageDecoded, ErrTooLarge}, {StageRunes, ErrTooLarge}, {StageLayers, ErrTooLarge},
		{StageWindow, ErrTooLarge}, {StageRatio, ErrTooLarge}, {StageIntegrity, ErrMalformed},
		{StageEncoding, ErrUnsupported}, {StageTimeout, ErrTimeout},
	}
	all := []error{ErrTooLarge, ErrMalformed, ErrUnsupported, ErrTimeout}
	for _, tt := range tests {
		var err error = &Error{Stage: tt.stage, Err: io.ErrUnexpectedEOF}
		for _, s := range all {
			if got := errors.Is(err, s); got != (s == tt.want) {
				t.Errorf("errors.Is(%s error, %v) = %v, want %v", tt.stage, s, got, s == tt.want)
			}
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("errors.Is(%s error, cause) = false, want true", tt.stage)
		}
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    *Error
		want string
	}{
		{&Error{Stage: StageDecoded, Limit: 10, Observed: 11, Encoding: "gzip"}, "limits: decoded limit exceeded: observed 11 > limit 10 bytes (gzip)"},
		{&Error{Stage: StageWire, Limit: 10, Observed: 99, Declared: true}, "limits: wire limit exceeded: declared 99 > limit 10 bytes"},
		{&Error{Stage: StageEncoding, Encoding: "compress"}, `limits: encoding: unsupported content-coding "compress"`},
		{&Error{Stage: StageIntegrity, Encoding: "zstd", Err: io.ErrUnexpectedEOF}, "limits: integrity: malformed body (zstd): unexpected EOF"},
		{&Error{Stage: StageLayers, Limit: 2, Observed: 3, Declared: true}, "limits: layers limit exceeded: declared 3 > limit 2 codings"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

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
