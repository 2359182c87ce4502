package decoder

import (
	"bytes"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestReadAllChunksAllocs: reading a small whole body into pooled chunks
// allocates, in steady state, only the Reader (and its layers and codec)
// and the list of chunks: no buffer per body, no box per pooled chunk.
func TestReadAllChunksAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops objects at random under the race detector")
	}
	for _, c := range []string{"identity", "gzip"} {
		body := encode(t, c, text(4<<10))
		src := bytes.NewReader(body)
		read := func() {
			src.Reset(body)
			d, err := NewReader(src, c, limits.Budget{})
			if err != nil {
				t.Fatal(err)
			}
			l, err := d.ReadAllChunks()
			if err != nil || l.Size() != 4<<10 {
				t.Fatalf("%s: %d bytes, %v", c, l.Size(), err)
			}
			l.Release()
		}
		read()
		// The Reader, its layers, its codec, the list's slice; gzip adds
		// the parsed coding list: its decoder and buffer are pooled.
		want := 4.0
		if c == "gzip" {
			want = 5
		}
		allocs := testing.AllocsPerRun(100, read)
		if allocs > want {
			t.Errorf("%s: whole 4 KiB body: %v allocations in steady state, want at most %v", c, allocs, want)
		}
	}
}
