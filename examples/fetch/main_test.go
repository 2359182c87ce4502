package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/boundhttp/boundhttp"
)

func TestFetch(t *testing.T) {
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte("x"), 8<<20))
	zw.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/doc", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("a short document"))
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bomb.Bytes())
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	s := httptest.NewServer(mux)
	defer s.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	refused := "http://" + ln.Addr().String() + "/"
	ln.Close()

	tests := []struct {
		args   []string
		exit   int
		status boundhttp.Status
		want   string
	}{
		{[]string{s.URL + "/doc"}, exitComplete, boundhttp.StatusComplete, `"body": "a short document"`},
		{[]string{"-preview", "7", s.URL + "/doc"}, exitComplete, boundhttp.StatusPreview, `"body": "a short"`},
		{[]string{"-max-decoded", "1048576", s.URL + "/bomb"}, exitRejected, boundhttp.StatusRejected, `"limit": 1048576`},
		{[]string{"-max-chars", "5", s.URL + "/doc"}, exitRejected, boundhttp.StatusRejected, `"stage": "runes"`},
		{[]string{s.URL + "/gone"}, exitHTTPError, boundhttp.StatusHTTPError, `"http_status": 410`},
		{[]string{refused}, exitFailed, boundhttp.StatusFailed, `"error":`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tt.args, &out, &errOut)
		var r boundhttp.Result
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("fetch %v: output is not a Result: %v\n%s%s", tt.args, err, out.String(), errOut.String())
		}
		if code != tt.exit || r.Status != tt.status || !strings.Contains(out.String(), tt.want) {
			t.Errorf("fetch %v: exit %d, status %s; want %d, %s, output containing %s:\n%s", tt.args, code, r.Status, tt.exit, tt.status, tt.want, out.String())
		}
		if r.Status == boundhttp.StatusRejected && strings.Contains(out.String(), "xxxx") {
			t.Errorf("fetch %v: the rejection carries body bytes", tt.args)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-max-wire", "-1", s.URL}, &out, &errOut); code != exitUsage {
		t.Errorf("fetch -max-wire -1: exit %d, want %d", code, exitUsage)
	}
	if code := run(context.Background(), nil, &out, &errOut); code != exitUsage {
		t.Errorf("fetch without URL: exit %d, want %d", code, exitUsage)
	}
}
