package testenc

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// NodePeers returns the node binary and the folder of the Node.js test
// peers (internal/testpeers/node, whose node_modules holds the official MCP
// TypeScript SDK that .ci/run installs with npm ci). A script run with
// that folder as its working directory can import
// "@modelcontextprotocol/sdk/...". The test is skipped when node or the
// packages are absent, except under CI (CI set), where it fails.
func NodePeers(t testing.TB) (node, dir string) {
	t.Helper()
	node = NeedTool(t, "node")
	_, file, _, _ := runtime.Caller(0)
	dir = filepath.Join(filepath.Dir(file), "..", "testpeers", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP TypeScript SDK is not installed in %s; .ci/run must run npm ci there", dir)
		}
		t.Skipf("the MCP TypeScript SDK is not installed in %s (run npm ci there); skipping", dir)
	}
	return node, dir
}

// NodeScript writes script into dir (from [NodePeers]) under a temporary
// name ending in .mjs, so that its imports resolve against dir's
// node_modules, and returns a command that runs it; the file is removed
// when the test ends.
func NodeScript(t testing.TB, node, dir, script string, args ...string) *exec.Cmd {
	t.Helper()
	f, err := os.CreateTemp(dir, "peer-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := f.WriteString(script); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cmd := exec.Command(node, append([]string{f.Name()}, args...)...)
	cmd.Dir = dir
	return cmd
}
