package honest

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"testing"
	"time"
)

// TestExpectContinue (server side, and our Transport passing the 1xx
// through): uploads that ask for "100 Continue" before their body (the
// client sets ExpectContinueTimeout on its base transport, 3 s, so that a
// 100 that never comes costs more than the time slack) to a handler that
// reads the body behind the Middleware, whole and streaming, with and
// without an outer layer, and answers with its hash. Each upload must
// get its 100 Continue, and its answer, as with stock. Bodies of 1 KiB to
// 1 MiB; 8 uploads per side (-short), 32 (default), 200 (-honest.long).
func TestExpectContinue(t *testing.T) {
	n := pick(8, 32, 200)
	data := text(5, 1<<20)
	w := workload{
		protos: allProtos,
		sides: []side{ours(noMW, noOuter), ours(wholeMW, noOuter), ours(wholeMW, sleepOuter),
			ours(streamMW, noOuter), ours(streamMW, sleepOuter)},
		tuneBase: func(b *http.Transport) { b.ExpectContinueTimeout = 3 * time.Second },
		pass: func(proto) (http.Handler, func(*env) outcome) {
			return http.HandlerFunc(hashAnswer), func(e *env) outcome {
				var o outcome
				for i := range n {
					size := 1 << 10 << (i * 3 % 11) // 1 KiB to 1 MiB
					var continues int
					trace := &httptrace.ClientTrace{Got100Continue: func() { continues++ }}
					req, err := http.NewRequestWithContext(httptrace.WithClientTrace(e.ctx, trace), "PUT",
						fmt.Sprintf("%s/objects/%d", e.url, i), bytes.NewReader(data[:size]))
					if err != nil {
						return outcome{err: err}
					}
					req.Header.Set("Expect", "100-continue")
					req.Header.Set("Content-Type", "application/x-ndjson")
					start := time.Now()
					x := e.do(req)
					x.extra = fmt.Sprintf("%d x 100 Continue", continues)
					if x.err == "" && continues != 1 {
						x.err = fmt.Sprintf("got %d 100 Continue, want 1", continues)
					}
					if want := fmt.Sprintf("%d %s", size, sumOf(data[:size])); x.err == "" && x.head != want {
						x.err = fmt.Sprintf("the handler got %q, want %q", x.head, want)
					}
					if d := time.Since(start); d > time.Second {
						o.notes = append(o.notes, fmt.Sprintf("upload %d (%d bytes) took %v", i, size, d))
					}
					o.ex = append(o.ex, x)
				}
				return o
			}
		},
	}
	w.run(t)
}
