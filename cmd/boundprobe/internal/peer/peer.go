// Package peer starts the servers that the probe's tests measure, on
// loopback: nginx as a reverse proxy with a body limit in front of a
// backend. It is for tests only.
package peer

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/testenc"
)

// Nginx starts nginx on a loopback port as a reverse proxy to backend (a
// base URL such as http://127.0.0.1:8080) with client_max_body_size
// maxBody (nginx syntax: "1m"), from a temporary configuration, and returns
// its base URL. It skips the test when nginx is not installed, except under
// CI; nginx is stopped, by its PID, when the test ends.
func Nginx(t testing.TB, maxBody, backend string) string {
	t.Helper()
	nginx := testenc.NeedTool(t, "nginx")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	run := t.TempDir()
	conf := fmt.Sprintf(`
daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	proxy_temp_path %[1]s/proxy;
	fastcgi_temp_path %[1]s/fastcgi;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	server {
		listen %[2]s;
		client_max_body_size %[3]s;
		location / {
			proxy_pass %[4]s;
			proxy_http_version 1.1;
		}
	}
}
`, run, addr, maxBody, backend)
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
