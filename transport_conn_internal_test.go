package boundhttp

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestClosedBodyArmsNoAbortTimer pins the trap of a watch that outlives
// its body: every fetch ends by cancelling the request's context and then
// closing the body (RoundTrip after a whole body, Body.Close after a
// streaming one), and the context's watch, started by the cancel, armed
// its abortGrace timer after Close had looked for it: each healthy fetch
// left a timer that fired 500 ms later and closed a closed body (500 of
// 500 fetches in a probe), keeping the body and its context alive till
// then. Time is synthetic here (testing/synctest), so the check is exact.
func TestClosedBodyArmsNoAbortTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		w := new(connWatch)
		h := new(Transport).startHeaderTimer(new(headerTimer), cancel, w)
		h.stop(nil, nil)
		b := guardBody(new(connBody), ctx, io.NopCloser(strings.NewReader("hello")), w, h)
		cancel()
		b.Close()
		synctest.Wait() // the context's watch has run
		time.Sleep(4 * abortGrace)
		if b.aborted.Load() {
			t.Errorf("a body closed by its owner was aborted %v later by its context's watch", 4*abortGrace)
		}
	})
}
