package body

import (
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// A usage record is read from other goroutines while its body is read
// (an observer, UsageOf in a handler behind http.TimeoutHandler): a reader
// must never see the wire bytes of one write with the decoded bytes or the
// end of another. Each write here keeps decoded = 2 x wire and done = wire
// even; a torn read breaks one of them.
func TestUsageReadsNeverMixTwoWrites(t *testing.T) {
	var u Usage
	u.Set(limits.Usage{}, true) // the first write, 0: done
	const writes = 20000
	var wg sync.WaitGroup
	for range 2 { // two writers: Set is safe for concurrent use
		wg.Go(func() {
			for i := range int64(writes) {
				u.Set(limits.Usage{WireBytes: i, DecodedBytes: 2 * i}, i%2 == 0)
			}
		})
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for range 2 {
		rg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, done := u.Get()
				if got.DecodedBytes != 2*got.WireBytes || done != (got.WireBytes%2 == 0) {
					t.Errorf("Get = %+v, done %v: two writes mixed", got, done)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	rg.Wait()
}
