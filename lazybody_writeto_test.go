package boundhttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// gateWriter blocks every Write until the test lets it through.
type gateWriter struct {
	entered chan int
	gate    chan struct{}
	n       int
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.entered <- len(p)
	<-w.gate
	w.n += len(p)
	return len(p), nil
}

// TestCloseStopsWriteToOfKeptRedirect (trap: Close from another goroutine
// must abort the read in progress): io.Copy of a whole body into a slow
// writer stops between writes once the body is closed, as fullBody
// documents. The body of a redirect kept with ErrUseLastResponse (a
// lazyBody serving a fullBody) ignored its Close and wrote on to the end.
func TestCloseStopsWriteToOfKeptRedirect(t *testing.T) {
	t.Parallel()
	const size = 600000 // several pooled chunks, so several writes
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "/elsewhere")
		serve(w, body{coding: "gzip", data: encode("gzip", text(size)), status: http.StatusFound})
	}))
	defer s.Close()
	tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 1 << 20}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	w := &gateWriter{entered: make(chan int, 64), gate: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, resp.Body)
		done <- err
	}()
	select {
	case <-w.entered: // the first write is in progress
	case <-time.After(10 * time.Second):
		t.Fatal("no write within 10 s")
	}
	resp.Body.Close()
	close(w.gate) // let every write through from now on
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("io.Copy still running 10 s after Close")
	}
	if err == nil || w.n >= size {
		t.Errorf("io.Copy after Close: wrote %d of %d bytes, error %v; want it stopped with an error", w.n, size, err)
	}
}
