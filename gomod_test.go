package boundhttp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// TestGoDirectiveIsAFloor pins the trap of declaring the toolchain one
// builds with: "go 1.26.8" raised every user's module to 1.26.8 when they
// added the dependency. The go directive of this module, of mcpbound and
// of examples/mcp names a minor release (1.N.0) no lower than any
// dependency's; go vet (its stdversion check) and the compiler reject
// code that needs a newer one.
func TestGoDirectiveIsAFloor(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	for _, dir := range []string{".", "mcpbound", "examples/mcp"} {
		cmd := exec.Command("go", "list", "-m", "-json", "all")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = errors.New(string(ee.Stderr)) // "go.mod requires go >= ...", "updates to go.mod needed"
			}
			t.Fatalf("%s: go list -m -json all: %v", dir, err)
		}
		var main string
		need, needBy := "0.0.0", ""
		d := json.NewDecoder(bytes.NewReader(out))
		for {
			var m struct {
				Path, GoVersion string
				Main            bool
			}
			if err := d.Decode(&m); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			switch {
			case m.Main:
				main = m.GoVersion
			case m.GoVersion != "" && versionLess(need, m.GoVersion):
				need, needBy = m.GoVersion, m.Path
			}
		}
		if !regexp.MustCompile(`^1\.\d+\.0$`).MatchString(main) {
			t.Errorf("%s: go directive %q, want a minor release 1.N.0: a patch level is forced on every user", dir, main)
		}
		if versionLess(main, need) {
			t.Errorf("%s: go directive %s is below %s, which %s requires", dir, main, need, needBy)
		}
	}
}

// versionLess reports whether Go version a (1.25, 1.25.0, 1.26.8) is
// below b.
func versionLess(a, b string) bool {
	num := func(v string) [3]int {
		var out [3]int
		for i, p := range regexp.MustCompile(`\d+`).FindAllString(v, 3) {
			out[i], _ = strconv.Atoi(p)
		}
		return out
	}
	x, y := num(a), num(b)
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}
