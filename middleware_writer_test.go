package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// capabilities lists the optional interfaces w has.
func capabilities(w http.ResponseWriter) string {
	var c []string
	if _, ok := w.(http.Flusher); ok {
		c = append(c, "Flusher")
	}
	if _, ok := w.(http.Hijacker); ok {
		c = append(c, "Hijacker")
	}
	if _, ok := w.(io.ReaderFrom); ok {
		c = append(c, "ReaderFrom")
	}
	if _, ok := w.(http.Pusher); ok {
		c = append(c, "Pusher")
	}
	return strings.Join(c, " ")
}

// TestStreamingWriterKeepsOptionalInterfaces pins the trap of a wrapping
// writer that hides what the server's writer can do: in streaming mode the
// handler's writer has exactly the Flusher, Hijacker, ReaderFrom and Pusher
// of the real server's writer, over HTTP/1.1 and HTTP/2, and a hijack works.
func TestStreamingWriterKeepsOptionalInterfaces(t *testing.T) {
	t.Parallel()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{}, Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	var outer, inner string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outer = capabilities(w)
		mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner = capabilities(w)
			io.ReadAll(r.Body)
			if r.URL.Path == "/hijack" {
				c, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				buf.WriteString("HTTP/1.1 299 Hijacked\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
				buf.Flush()
				return
			}
			io.Copy(w, strings.NewReader("copied")) // through ReadFrom where there is one
		})).ServeHTTP(w, r)
	})
	s1 := httptest.NewServer(h)
	defer s1.Close()
	s2 := httptest.NewUnstartedServer(h)
	s2.EnableHTTP2 = true
	s2.StartTLS()
	defer s2.Close()
	for _, tt := range []struct {
		name string
		s    *httptest.Server
		want string
	}{
		{"HTTP/1.1", s1, "Flusher Hijacker ReaderFrom"},
		{"HTTP/2", s2, "Flusher Pusher"},
	} {
		outer, inner = "", ""
		resp, err := tt.s.Client().Post(tt.s.URL, "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if inner != outer || outer != tt.want || string(data) != "copied" {
			t.Errorf("%s: handler's writer has %q, server's %q, answer %q; want both %q, %q", tt.name, inner, outer, data, tt.want, "copied")
		}
	}
	status, _ := rawExchange(t, s1.Listener.Addr().String(), "POST /hijack HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbody")
	if status != 299 {
		t.Errorf("hijacked answer: status %d, want 299", status)
	}
}
