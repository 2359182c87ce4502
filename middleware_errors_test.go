package boundhttp_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/boundhttp/boundhttp"
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
