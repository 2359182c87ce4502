package boundhttp_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
)

// TestResponseCapClients: curl and the Transport, over HTTP/1.1 and
// HTTP/2, before and after the first flush. Before, the client gets a 500
// problem; after, the response must never end cleanly, and exactly the cap
// after a flush is delivered whole.
func TestResponseCapClients(t *testing.T) {
	t.Parallel()
	curl := needTool(t, "curl")
	const limit = 20000
	plans := []writePlan{
		{n: limit + 1, header: true},               // 0: before: WriteHeader(200), one write over the cap
		{n: limit + 1, piece: 1000, flushAt: 1000}, // 1: after the first flush
		{n: limit, piece: 1000, flushAt: 1000},     // 2: exactly the cap, after a flush
	}
	for _, h2 := range []bool{false, true} {
		rec := &logRecorder{}
		s, errs := cappedServer(t, limit, h2, plans, slog.New(rec))
		proto := map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[h2]
		tr := &boundhttp.Transport{Base: s.Client().Transport}
		dir := t.TempDir()
		for i, p := range plans {
			url := s.URL + "/" + string(rune('0'+i))
			name := proto + " " + []string{"before the flush", "after the flush", "cap after the flush"}[i]

			// The Transport.
			resp, got, err := get(t, tr, url)
			herrs := <-errs
			switch i {
			case 0:
				if err != nil || resp.StatusCode != 500 || problem(t, string(got)).Stage != "response" {
					t.Errorf("%s, Transport: %v, %v; want a 500 problem of stage response", name, err, resp)
				}
			case 1:
				t.Logf("%s, Transport: %v after %d bytes", name, err, len(got))
				if err == nil {
					t.Errorf("%s, Transport: %d bytes and a clean end; want an error", name, len(got))
				}
			case 2:
				if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, text(p.n)) {
					t.Errorf("%s, Transport: %v, %d bytes; want 200 and the %d bytes", name, err, len(got), p.n)
				}
			}
			if err == nil && h2 && resp.ProtoMajor != 2 {
				t.Errorf("%s: the Transport spoke %s", name, resp.Proto)
			}
			wantStageResponse(t, name, herrs, i < 2)

			// curl.
			out := filepath.Join(dir, "out")
			args := []string{"-sS", "-o", out, "-w", "%{http_code} %{http_version}"}
			if h2 {
				args = append(args, "--http2", "-k")
			} else {
				args = append(args, "--http1.1")
			}
			stdout, err := exec.Command(curl, append(args, url)...).Output()
			<-errs
			body, _ := os.ReadFile(out)
			os.Remove(out)
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("%s: curl: %v", name, err)
			}
			status := strings.TrimSpace(string(stdout))
			wantVersion := map[bool]string{false: "1.1", true: "2"}[h2]
			switch i {
			case 0:
				if code != 0 || status != "500 "+wantVersion || problem(t, string(body)).Stage != "response" {
					t.Errorf("%s, curl: exit %d, %q, %q; want 500 over %s and a problem of stage response", name, code, status, body, wantVersion)
				}
			case 1:
				// 18: partial file (HTTP/1.1), 92: stream error (HTTP/2);
				// any failure will do, a clean exit will not.
				t.Logf("%s, curl: exit %d after %d bytes", name, code, len(body))
				if code == 0 || len(body) > limit {
					t.Errorf("%s, curl: exit %d with %d bytes; want a failure, at most %d bytes", name, code, len(body), limit)
				}
			case 2:
				if code != 0 || status != "200 "+wantVersion || !bytes.Equal(body, text(p.n)) {
					t.Errorf("%s, curl: exit %d, %q, %d bytes; want 200 over %s and the %d bytes", name, code, status, len(body), wantVersion, p.n)
				}
			}
		}
		// One record per breach, per client: the 500s and the aborts.
		rec.mu.Lock()
		var rejected, aborted int
		for _, r := range rec.recs {
			attrs := map[string]string{}
			r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
			if attrs["stage"] != "response" || attrs["limit"] != "20000" || r.Level != slog.LevelError {
				t.Errorf("%s: log record %q %v, want stage response, limit 20000, level error", proto, r.Message, attrs)
			}
			switch attrs["aborted"] {
			case "true":
				aborted++
			case "false":
				rejected++
			}
		}
		rec.mu.Unlock()
		if rejected != 2 || aborted != 2 {
			t.Errorf("%s: %d records of 500s, %d of aborts; want 2 and 2", proto, rejected, aborted)
		}
	}
}
