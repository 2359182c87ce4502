package honest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRedirectWithBody (client side; the server side runs too, since the
// first handler answers without reading the body): POSTs whose body
// http.Client sends again, through GetBody, after a 307 or a 308; the first
// handler redirects without reading the body, the second answers with the
// body's hash. The redirect's own body varies as servers send it: none, a
// short text with a Content-Length, 8 KiB of chunked HTML (more than the
// 2 KiB http.Client reads of it), and gzip-coded HTML. Bodies of 16 KiB
// and 1 MiB.
func TestRedirectWithBody(t *testing.T) {
	data := text(6, 1<<20)
	html := bytes.Repeat([]byte("<p>This resource has moved; follow the Location header.</p>\n"), 8<<10/60)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(html)
	zw.Close()
	redirectBodies := []string{"none", "text", "chunked", "gzip"}
	w := workload{
		protos: allProtos,
		sides:  []side{ours(noMW, noOuter), ours(wholeMW, noOuter), ours(streamMW, noOuter), ours(streamMW, busyOuter)},
		pass: func(proto) (http.Handler, func(*env) outcome) {
			mux := http.NewServeMux()
			// /moved/{code}/{body}: redirect to /echo without reading.
			mux.HandleFunc("POST /moved/{code}/{body}", func(w http.ResponseWriter, r *http.Request) {
				code, _ := strconv.Atoi(r.PathValue("code"))
				w.Header().Set("Location", "/echo?from="+r.PathValue("body"))
				switch r.PathValue("body") {
				case "none":
					w.WriteHeader(code)
				case "text":
					msg := "moved to /echo\n"
					w.Header().Set("Content-Type", "text/plain")
					w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
					w.WriteHeader(code)
					io.WriteString(w, msg)
				case "chunked":
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(code)
					for p := html; len(p) > 0; p = p[min(len(p), 1000):] {
						w.Write(p[:min(len(p), 1000)])
						http.NewResponseController(w).Flush()
					}
				case "gzip":
					w.Header().Set("Content-Type", "text/html")
					w.Header().Set("Content-Encoding", "gzip")
					w.Header().Set("Content-Length", strconv.Itoa(gz.Len()))
					w.WriteHeader(code)
					w.Write(gz.Bytes())
				}
			})
			mux.HandleFunc("POST /echo", hashAnswer)
			return mux, func(e *env) outcome {
				var o outcome
				for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
					for _, rb := range redirectBodies {
						for _, size := range []int{16 << 10, 1 << 20} {
							req, err := http.NewRequestWithContext(e.ctx, "POST", fmt.Sprintf("%s/moved/%d/%s", e.url, code, rb), bytes.NewReader(data[:size]))
							if err != nil {
								return outcome{err: err}
							}
							req.Header.Set("Content-Type", "application/json")
							o.ex = append(o.ex, redirected(e, req, size, data[:size]))
						}
					}
				}
				return o
			}
		},
	}
	w.run(t)
}

// redirected sends req, which is redirected once, and checks the answer
// of the handler it was redirected to.
func redirected(e *env, req *http.Request, size int, data []byte) exchange {
	resp, err := e.client.Do(req)
	if err != nil {
		return exchange{err: e.clean(err.Error())}
	}
	defer resp.Body.Close()
	x := readAnswer(resp, e.clean)
	x.extra = "final " + resp.Request.Method + " " + resp.Request.URL.RequestURI()
	if want := fmt.Sprintf("%d %s", size, sumOf(data)); x.err == "" && x.head != want {
		x.err = fmt.Sprintf("the handler got %q, want %q", x.head, want)
	}
	if x.err == "" && !strings.HasPrefix(resp.Request.URL.Path, "/echo") {
		x.err = "not redirected: " + x.extra
	}
	return x
}
