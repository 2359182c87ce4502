package boundhttp_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// TestRequestBodyErrorMaxBytesOnlyForByteStages pins that a JSON depth (or
// any other count) is never reported as a *http.MaxBytesError, whose Limit
// is a number of bytes.
func TestRequestBodyErrorMaxBytesOnlyForByteStages(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		stage limits.Stage
		want  bool
	}{
		{limits.StageWire, true},
		{limits.StageDecoded, true},
		{limits.StageJSON, false},
		{limits.StageLayers, false},
		{limits.StageWindow, false},
		{limits.StageRunes, false},
		{limits.StageRatio, false},
		{limits.StageIntegrity, false},
		{limits.StageTimeout, false},
	} {
		err := error(&boundhttp.RequestBodyError{Err: &limits.Error{Stage: tt.stage, Limit: 2, Observed: 3}})
		var mbe *http.MaxBytesError
		got := errors.As(err, &mbe)
		if got != tt.want || (got && mbe.Limit != 2) {
			t.Errorf("stage %s: errors.As *http.MaxBytesError %v (%v), want %v", tt.stage, got, mbe, tt.want)
		}
		var le *limits.Error
		if !errors.As(err, &le) || le.Stage != tt.stage {
			t.Errorf("stage %s: errors.As *limits.Error %v", tt.stage, le)
		}
	}
}

// TestConfigErrorsAtConstruction pins the trap of a configuration error
// that surfaces per request: an invalid decoding option fails
// NewMiddleware, not every POST.
func TestConfigErrorsAtConstruction(t *testing.T) {
	t.Parallel()
	_, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(-1)}})
	if err == nil {
		t.Error("NewMiddleware with decoding.WithMaxMembers(-1): no error")
	}
	if _, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{DecodeOptions: []decoding.Option{decoding.WithMaxMembers(3)}}); err != nil {
		t.Errorf("NewMiddleware with decoding.WithMaxMembers(3): %v", err)
	}
}

// TestInvalidBudgetForLoggedWithoutLogger pins that an invalid per-route
// budget is logged, as the doc says, when no Logger is set: to
// slog.Default. Not parallel: it swaps slog.Default.
func TestInvalidBudgetForLoggedWithoutLogger(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		BudgetFor: func(*http.Request) limits.Budget { return limits.Budget{MaxWireBytes: -1} },
	})
	if err != nil {
		t.Fatal(err)
	}
	called := false
	h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true }))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/tool", strings.NewReader("x")))
	if w.Code != 500 || called || !strings.Contains(logs.String(), "invalid per-route budget") {
		t.Errorf("invalid BudgetFor budget, no Logger: status %d, handler called %v, slog.Default got %q; want 500, not called, logged", w.Code, called, logs.String())
	}
}
