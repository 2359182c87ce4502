package boundhttp_test

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestUsageOfMidStreamAndAfterEarlyClose pins the trap "usage recorded only
// at the end": in streaming mode UsageOf reports the bytes read so far at
// every moment, from any goroutine, and after an early Close what was read
// before it, never as verified.
func TestUsageOfMidStreamAndAfterEarlyClose(t *testing.T) {
	t.Parallel()
	const size, first = 500000, 200000
	for _, c := range codings {
		s := server(t, body{coding: c, data: encode(c, text(size)), chunked: true})
		resp, err := (&http.Client{Transport: &boundhttp.Transport{Streaming: true}}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		// Another goroutine watches the usage while this one reads.
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Go(func() {
			var last limits.Usage
			for i := 0; i < 1e6 && !stop.Load(); i++ {
				u, _ := boundhttp.UsageOf(resp)
				if u.DecodedBytes < last.DecodedBytes || u.WireBytes < last.WireBytes || u.DecodedBytes > first {
					t.Errorf("%s: UsageOf went from %v to %v while reading %d bytes", c, last, u, first)
					return
				}
				last = u
			}
		})
		n, err := io.ReadFull(resp.Body, make([]byte, first))
		stop.Store(true)
		wg.Wait()
		if err != nil || n != first {
			t.Fatalf("%s: read %d, %v", c, n, err)
		}
		u, done := boundhttp.UsageOf(resp)
		if u.DecodedBytes != first || u.WireBytes <= 0 || done {
			t.Errorf("%s: UsageOf after reading %d of %d bytes = %v, %v; want decoded %d, some wire bytes, not done", c, first, size, u, done, first)
		}
		resp.Body.Close()
		if after, done := boundhttp.UsageOf(resp); after != u || done {
			t.Errorf("%s: UsageOf after an early Close = %v, %v; want %v, false", c, after, done, u)
		}
	}
}
