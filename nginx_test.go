package boundhttp_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
// server (after its listen line), stops it by PID when the test ends, and
// returns its base URL.
func runNginx(t *testing.T, modules, server string) string {
	t.Helper()
	nginx := needTool(t, "nginx")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	run := t.TempDir()
	conf := fmt.Sprintf(`
%s
daemon off;
master_process off;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path %[2]s/body;
	proxy_temp_path %[2]s/proxy;
	fastcgi_temp_path %[2]s/fastcgi;
	uwsgi_temp_path %[2]s/uwsgi;
	scgi_temp_path %[2]s/scgi;
	default_type text/plain;
	server {
		listen %[3]s;
		%[4]s
	}
}
`, modules, run, addr, server)
	cf := filepath.Join(run, "nginx.conf")
	os.WriteFile(cf, []byte(conf), 0o644)
	cmd := exec.Command(nginx, "-p", run, "-c", cf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			logs, _ := os.ReadFile(filepath.Join(run, "error.log"))
			t.Fatalf("nginx did not listen on %s: %s %s", addr, stderr.String(), logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr
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
