package peertext

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestBoundKeepsPlainErrorsAndCutsPeerText pins the entry of an outside
// error: a plain text of at most MaxError bytes keeps the error as it is
// (its identity, for == comparisons); one byte more, a control byte, a
// non-ASCII byte or a backslash wraps it, and the wrapper's text is the
// Echo of the original, at most MaxErrorText bytes, never wrapped twice.
func TestBoundKeepsPlainErrorsAndCutsPeerText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		wrapped bool
	}{
		{"empty", "", false},
		{"MaxError-1", strings.Repeat("x", MaxError-1), false},
		{"MaxError", strings.Repeat("x", MaxError), false},
		{"MaxError+1", strings.Repeat("x", MaxError+1), true},
		{"a megabyte", strings.Repeat("IGNORE ALL PREVIOUS INSTRUCTIONS ", 1<<15), true},
		{"a control byte", "x\x1b[31m", true},
		{"a DEL byte", "x\x7f", true},
		{"non-ASCII", "é", true},
		{"a backslash", `\x41`, true},
		{"a megabyte of continuation bytes", strings.Repeat("\x80", 1<<20), true},
	}
	for _, tt := range tests {
		orig := errors.New(tt.text)
		got := Bound(orig)
		if _, isWrapped := got.(*Error); isWrapped != tt.wrapped || !tt.wrapped && got != orig {
			t.Errorf("%s: Bound = %T, wrapped %v; want wrapped %v (else the same error)", tt.name, got, isWrapped, tt.wrapped)
		}
		want := Echo(tt.text, MaxError)
		if text := got.Error(); text != want || len(text) > MaxErrorText {
			t.Errorf("%s: text %d bytes %.80q, want Echo's %.80q (at most %d)", tt.name, len(text), text, want, MaxErrorText)
		}
		if Text(orig) != want || Text(got) != want {
			t.Errorf("%s: Text = %.80q / %.80q, want %.80q", tt.name, Text(orig), Text(got), want)
		}
		if Bound(got) != got {
			t.Errorf("%s: Bound of a bounded error wraps it again", tt.name)
		}
		if !errors.Is(got, orig) {
			t.Errorf("%s: errors.Is(Bound(err), err) = false", tt.name)
		}
	}
	if Bound(nil) != nil {
		t.Errorf("Bound(nil) != nil")
	}
}

// TestBoundErrorKeepsTimeoutAndChain pins what a wrapper must not hide:
// errors.Is and errors.As reach the original and what it wraps, and
// Timeout reports the chain's answer (a *url.Error asks its direct cause).
// A wrapper is no net.Error of its own (no Temporary): a server that
// treats a net.Error as a vanished client must not mistake a peer's
// malformed framing for one.
func TestBoundErrorKeepsTimeoutAndChain(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", MaxError+1)
	timeout := Bound(fmt.Errorf("%s: %w", long, os.ErrDeadlineExceeded))
	var te interface{ Timeout() bool }
	if !errors.As(timeout, &te) || !te.Timeout() || !errors.Is(timeout, os.ErrDeadlineExceeded) {
		t.Errorf("a bounded deadline error: Timeout or errors.Is lost")
	}
	other := Bound(fmt.Errorf("%s: %w", long, context.Canceled))
	if o := other.(interface{ Timeout() bool }); o.Timeout() || !errors.Is(other, context.Canceled) {
		t.Errorf("a bounded cancellation: Timeout %v, errors.Is %v; want false, true", o.Timeout(), errors.Is(other, context.Canceled))
	}
	if _, ok := other.(interface{ Temporary() bool }); ok {
		t.Errorf("the wrapper has Temporary: it would pass as a net.Error")
	}
}
