package boundhttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestTransportInFlightCloseWhileReading: a streaming response body closed
// from another goroutine while a Read is blocked in the connection gives
// back its whole charge, and the blocked Read returns. Run with -race: the
// Close must not return the decoders (and their charge) while the Read
// still uses them.
func TestTransportInFlightCloseWhileReading(t *testing.T) {
	t.Parallel()
	for _, coding := range []string{"gzip", "zstd", "br"} {
		t.Run(coding, func(t *testing.T) {
			t.Parallel()
			full := encode(coding, text(2<<20))
			release := make(chan struct{})
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Encoding", coding)
				w.Write(full[:len(full)/2])
				w.(http.Flusher).Flush()
				select { // stall until the client is gone or the test ends
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer s.Close()
			defer close(release)
			f := limits.NewInFlight(64 << 20)
			tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 4 << 20}, InFlight: f, Streaming: true}
			defer tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL, nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4096)
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatalf("first read: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				var err error
				for i := 0; i < 1<<20 && err == nil; i++ {
					_, err = resp.Body.Read(buf)
				}
				done <- err
			}()
			time.Sleep(50 * time.Millisecond) // let the reader block on the stalled connection
			if f.InUse() == 0 {
				t.Fatal("InUse() = 0 while a coded body is being read")
			}
			resp.Body.Close()
			select {
			case err := <-done:
				if err == nil || err == io.EOF {
					t.Fatalf("Read after a concurrent Close = %v, want an error", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Read still blocked 20s after Close")
			}
			waitInUse(t, f, coding)
		})
	}
}

// TestMiddlewareInFlightCloseWhileReading: a streaming handler that closes
// its request body from one goroutine while another reads it gives back
// the whole charge, and neither races with the other (run with -race): the
// decoding.Reader must not be closed under a Read in progress.
func TestMiddlewareInFlightCloseWhileReading(t *testing.T) {
	t.Parallel()
	for _, coding := range []string{"gzip", "zstd", "br"} {
		t.Run(coding, func(t *testing.T) {
			t.Parallel()
			enc := encode(coding, text(2<<20))
			f := limits.NewInFlight(64 << 20)
			readErr := make(chan error, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				buf := make([]byte, 4096)
				if _, err := io.ReadFull(r.Body, buf); err != nil {
					readErr <- err
					return
				}
				done := make(chan error, 1)
				go func() {
					var err error
					for i := 0; i < 1<<20 && err == nil; i++ {
						_, err = r.Body.Read(buf)
					}
					done <- err
				}()
				time.Sleep(50 * time.Millisecond) // let the reader block on the stalled client
				r.Body.Close()
				select {
				case err := <-done:
					readErr <- err
				case <-time.After(20 * time.Second):
					readErr <- errors.New("Read still blocked 20s after Close")
				}
			})
			s := httptest.NewServer(mustMW(t, boundhttp.MiddlewareConfig{Budget: limits.Budget{MaxDecodedBytes: 4 << 20}, InFlight: f, Streaming: true})(h))
			defer s.Close()
			pr, pw := io.Pipe()
			go func() {
				pw.Write(enc[:len(enc)/2])
				time.Sleep(300 * time.Millisecond) // stalls while the handler closes
				pw.Write(enc[len(enc)/2:])
				pw.Close()
			}()
			req, _ := http.NewRequest("POST", s.URL, pr)
			req.Header.Set("Content-Encoding", coding)
			if resp, err := s.Client().Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			select {
			case err := <-readErr:
				// Close waits for the blocked Read, which the client's rest
				// ends: the reader may win the lock again and reach the end.
				if err == nil {
					t.Fatal("Read loop ended without an error")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("handler did not finish within 20s")
			}
			waitInUse(t, f, coding)
		})
	}
}
