package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestCurlClient sends request bodies with curl, a client no one here
// wrote, to a server behind the Middleware.
func TestCurlClient(t *testing.T) {
	t.Parallel()
	curl := needTool(t, "curl")
	gzipTool := needTool(t, "gzip")
	var handled atomic.Int64
	mw := boundhttp.Middleware(limits.Budget{MaxWireBytes: 100000, MaxDecodedBytes: 200000})
	s := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strconv.FormatInt(n, 10))
	})))
	defer s.Close()

	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	small := write("small.txt", text(50000))
	big := write("big.txt", text(100001))
	exact := write("exact.txt", text(100000))
	write("bomb", bytes.Repeat([]byte{0}, 8<<20))
	write("fits", text(200000))
	for _, f := range []string{"bomb", "fits"} {
		if out, err := exec.Command(gzipTool, "-k", "-9", filepath.Join(dir, f)).CombinedOutput(); err != nil {
			t.Fatalf("gzip: %v %s", err, out)
		}
	}
	tests := []struct {
		name   string
		args   []string
		status string
		body   string // the handler's answer, for 200
	}{
		{"small", []string{"--data-binary", "@" + small}, "200", "50000"},
		{"exact wire limit", []string{"--data-binary", "@" + exact}, "200", "100000"},
		{"one over, Content-Length", []string{"--data-binary", "@" + big}, "413", ""},
		{"one over, chunked", []string{"--data-binary", "@" + big, "-H", "Transfer-Encoding: chunked"}, "413", ""},
		{"exact, chunked", []string{"--data-binary", "@" + exact, "-H", "Transfer-Encoding: chunked"}, "200", "100000"},
		{"expect 100-continue, oversized", []string{"--data-binary", "@" + big, "-H", "Expect: 100-continue"}, "413", ""},
		{"precompressed fits", []string{"--data-binary", "@" + filepath.Join(dir, "fits.gz"), "-H", "Content-Encoding: gzip"}, "200", "200000"},
		{"precompressed bomb", []string{"--data-binary", "@" + filepath.Join(dir, "bomb.gz"), "-H", "Content-Encoding: gzip"}, "413", ""},
		{"unsupported coding", []string{"--data-binary", "@" + small, "-H", "Content-Encoding: compress"}, "415", ""},
	}
	for _, tt := range tests {
		args := append([]string{"-sS", "-o", "-", "-w", "\n%{http_code}", "-H", "Content-Type: application/octet-stream"}, tt.args...)
		out, err := exec.Command(curl, append(args, s.URL)...).Output()
		if err != nil {
			t.Errorf("%s: curl: %v", tt.name, err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		status := lines[len(lines)-1]
		answer := strings.Join(lines[:len(lines)-1], "\n")
		if status != tt.status || (tt.body != "" && answer != tt.body) {
			t.Errorf("%s: curl got %s %q, want %s %q", tt.name, status, answer, tt.status, tt.body)
		}
		if tt.status != "200" && !strings.Contains(answer, `"stage"`) {
			t.Errorf("%s: answer %q is not a problem document", tt.name, answer)
		}
	}
	if n := handled.Load(); n != 4 {
		t.Errorf("handler called %d times, want 4 (only for accepted bodies)", n)
	}
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
