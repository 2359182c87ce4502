package boundhttp_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

const brotliStaticModule = "/usr/lib/nginx/modules/ngx_http_brotli_static_module.so"

var needTool = testenc.NeedTool

// compressFile writes name.ext next to name with a command-line encoder.
func compressFile(t *testing.T, tool string, args ...string) {
	t.Helper()
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v: %s", tool, args, err, out)
	}
}

// startNginx serves dir with gzip_static and brotli_static on a loopback
// port, from a temporary configuration, and returns its base URL.
func startNginx(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(brotliStaticModule); err != nil {
		needTool(t, "nginx")
		if os.Getenv("CI") != "" {
			t.Fatalf("%s missing; .ci/run must install libnginx-mod-http-brotli-static", brotliStaticModule)
		}
		t.Skipf("%s missing; skipping", brotliStaticModule)
	}
	return runNginx(t, "load_module "+brotliStaticModule+";", fmt.Sprintf(`
		root %s;
		gzip_static on;
		brotli_static on;`, dir))
}

// runNginx starts nginx on a loopback port with one server block holding
// server; see [testenc.Nginx].
func runNginx(t *testing.T, modules, server string) string {
	t.Helper()
	return testenc.Nginx(t, modules, server)
}

// TestNginxPrecompressed fetches files that nginx serves precompressed
// (gzip_static, brotli_static), written by the gzip and brotli tools.
func TestNginxPrecompressed(t *testing.T) {
	t.Parallel()
	gz, br := needTool(t, "gzip"), needTool(t, "brotli")
	dir := t.TempDir()
	normal := text(300000)
	os.WriteFile(filepath.Join(dir, "normal.txt"), normal, 0o644)
	os.WriteFile(filepath.Join(dir, "bomb.txt"), []byte("placeholder\n"), 0o644)
	bomb := make([]byte, 64<<20)
	bombPath := filepath.Join(t.TempDir(), "bomb.txt")
	os.WriteFile(bombPath, bomb, 0o644)
	compressFile(t, gz, "-k", "-9", filepath.Join(dir, "normal.txt"))
	compressFile(t, br, "-k", filepath.Join(dir, "normal.txt"))
	compressFile(t, gz, "-k", "-9", bombPath)
	compressFile(t, br, "-k", bombPath)
	for _, ext := range []string{".gz", ".br"} {
		if err := os.Rename(bombPath+ext, filepath.Join(dir, "bomb.txt"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	base := startNginx(t, dir)

	budget := limits.Budget{MaxDecodedBytes: 1 << 20}
	for _, coding := range []string{"gzip", "br"} {
		tr := &boundhttp.Transport{Budget: budget, AcceptEncoding: coding}
		// Check that nginx really sent the coding.
		var sent string
		tr.Base = rtFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := http.DefaultTransport.RoundTrip(r)
			if err == nil {
				sent = resp.Header.Get("Content-Encoding")
			}
			return resp, err
		})
		resp, got, err := get(t, tr, base+"/normal.txt")
		if err != nil || !bytes.Equal(got, normal) {
			t.Errorf("nginx %s normal.txt: %d bytes, %v; want %d bytes", coding, len(got), err, len(normal))
		} else if sent != coding || !resp.Uncompressed {
			t.Errorf("nginx normal.txt: Content-Encoding %q, Uncompressed %v; want %q, true", sent, resp.Uncompressed, coding)
		}
		_, _, err = get(t, tr, base+"/bomb.txt")
		if stageOf(err) != "decoded" || sent != coding {
			t.Errorf("nginx %s bomb.txt (64 MiB of zeros): %v (sent %q), want stage decoded", coding, err, sent)
		}
	}
	// The wire limit against nginx's Content-Length.
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxWireBytes: 1000}, AcceptEncoding: "identity"}
	if _, _, err := get(t, tr, base+"/normal.txt"); stageOf(err) != "wire" {
		t.Errorf("nginx identity normal.txt, wire limit 1000: %v, want stage wire", err)
	}
}
