package decoder

import (
	"bytes"
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestPoolNoStateLeak interleaves valid and hostile bodies through the
// pooled decoders, abandoning hostile ones mid-stream, and checks that every
// valid body still decodes exactly.
func TestPoolNoStateLeak(t *testing.T) {
	t.Parallel()
	b := limits.Budget{MaxDecodedBytes: 200000}
	type body struct {
		coding string
		data   []byte
		enc    []byte
	}
	var valid, hostile []body
	for i, c := range compressed {
		d := text(10000 + 3000*i)
		valid = append(valid, body{c, d, encode(t, c, d)})
		good := encode(t, c, text(150000))
		hostile = append(hostile,
			body{c, nil, encode(t, c, bytes.Repeat([]byte("h"), 1<<20))},  // bomb
			body{c, nil, good[:len(good)/2]},                              // truncated
			body{c, nil, append(append([]byte(nil), good...), "junk"...)}, // trailing
		)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for round := range 20 {
				h := hostile[(round+g)%len(hostile)]
				d, _ := NewReader(bytes.NewReader(h.enc), h.coding, b)
				if round%2 == 0 {
					d.Read(make([]byte, 1000)) // abandon mid-stream
				} else {
					readInPieces(d, 4096)
				}
				d.Close()
				v := valid[(round*3+g)%len(valid)]
				got, err := ReadAll(bytes.NewReader(v.enc), v.coding, b)
				if err != nil || !bytes.Equal(got, v.data) {
					t.Errorf("valid %s body after hostile %s: %d bytes, %v; want %d bytes", v.coding, h.coding, len(got), err, len(v.data))
				}
			}
		})
	}
	wg.Wait()
}
