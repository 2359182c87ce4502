package boundhttp_test

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestTransportCloseDuringBlockedRead: a caller that closes a streaming
// response body from another goroutine while its Read waits for the
// server (the usual way to abort a download) must not have the body's
// pooled decoder state handed back under that Read: the decoders return
// to their pools only after the Read has returned (run with -race to see
// the difference).
func TestTransportCloseDuringBlockedRead(t *testing.T) {
	t.Parallel()
	raw := make([]byte, 200000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte('a' + rng.IntN(26))
	}
	data := encode("gzip", raw)
	proceed := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		select {
		case <-proceed:
		case <-time.After(5 * time.Second):
		}
		w.Write(data[len(data)/2:])
	}))
	t.Cleanup(s.Close)
	defer close(proceed)
	tr := &boundhttp.Transport{Budget: limits.Budget{}, Streaming: true}
	resp, err := (&http.Client{Transport: tr}).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		buf := make([]byte, 512)
		_, err := resp.Body.Read(buf)
		close(first)
		for range 100000 {
			if err != nil {
				break
			}
			_, err = resp.Body.Read(buf)
		}
		done <- err
	}()
	<-first
	time.Sleep(100 * time.Millisecond) // the next Read waits for the server
	if err := resp.Body.Close(); err != nil {
		t.Errorf("Close during a blocked Read: %v", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("Read after Close from another goroutine: no error")
		}
	case <-time.After(5 * time.Second):
		t.Errorf("Close did not end the blocked Read")
	}
}
