package testenc

import (
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// NeedTool returns the path of a command-line peer (an encoder, nginx,
// curl), skipping the test when it is absent, except under CI (CI set),
// where .ci/run installs it and its absence is a failure.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed; .ci/run must install it", name)
		}
		t.Skipf("%s not installed; skipping (.ci/run installs it)", name)
	}
	return p
}

// StageOf returns the stage of a *limits.Error in err's chain, "" for nil
// and "other: ..." for any other error.
func StageOf(err error) string {
	if err == nil {
		return ""
	}
	var e *limits.Error
	if errors.As(err, &e) {
		return string(e.Stage)
	}
	return "other: " + err.Error()
}
