package boundhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestNginxRelaysHandlersOwnMaxBytesReader pins the trap of a handler's own
// http.MaxBytesReader behind the streaming Middleware: the writer it hands
// to MaxBytesReader is the Middleware's, so net/http never learns that a
// limit was hit and closes with the rest of the body unread, which nginx's
// default proxy config turns into a 502. Behind the Middleware, the
// handler's own 413 must arrive as it does without it, at 1 MiB and 16 MiB.
func TestNginxRelaysHandlersOwnMaxBytesReader(t *testing.T) {
	t.Parallel()
	tries := 40
	if testing.Short() {
		tries = 4
	}
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 256<<10)
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, "handler's own limit", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "accepted")
	})
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		Budget: limits.Budget{MaxWireBytes: 64 << 20, MaxDecodedBytes: 64 << 20}, Streaming: true})
	if err != nil {
		t.Fatal(err)
	}
	alone := httptest.NewServer(own)
	defer alone.Close()
	behind := httptest.NewServer(mw(own))
	defer behind.Close()
	base := runNginx(t, "", fmt.Sprintf(`
		client_max_body_size 32m;
		location /alone/ { proxy_pass %s; }
		location /behind/ { proxy_pass %s; }`, alone.URL, behind.URL))
	data := text(16 << 20)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: time.Minute}
	defer c.CloseIdleConnections()
	var cells []testenc.SweepCell
	for _, path := range []string{"/alone/", "/behind/"} {
		for _, size := range []int{1 << 20, 16 << 20} {
			cells = append(cells, testenc.SweepCell{Name: fmt.Sprintf("%s %d MiB", path, size>>20), Want: 413,
				Send: func() (*http.Response, error) {
					return c.Post(base+path, "application/octet-stream", bytes.NewReader(data[:size]))
				}})
		}
	}
	// The handler's own 413, every time.
	testenc.StatusSweep(t, tries, cells)
}
