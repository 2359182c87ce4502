package testenc

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Nginx starts nginx on a loopback port from a temporary configuration:
// modules at the top (load_module lines, or ""), and one server block
// holding server after its listen line. It returns the base URL, skips the
// test when nginx is not installed (fails under CI, see [NeedTool]) and
// stops nginx by its PID when the test ends.
func Nginx(t testing.TB, modules, server string) string {
	t.Helper()
	nginx := NeedTool(t, "nginx")
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
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
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
