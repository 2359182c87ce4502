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

// TestReadAllocs: with pooled decoders, a Read in steady state allocates
// nothing.
func TestReadAllocs(t *testing.T) {
	buf := make([]byte, 4096)
	for _, c := range codings {
		data := benchBody
		if testing.Short() {
			data = data[:1<<20] // enough for the 210 reads of 4 KiB below
		}
		body := encode(t, c, data)
		for range 2 { // the second body runs on pooled decoders
			d, err := NewReader(bytes.NewReader(body), c, limits.Budget{MaxDecodedBytes: 8 << 20, MaxRatio: 1000, Timeout: 3600e9})
			if err != nil {
				t.Fatal(err)
			}
			for range 10 {
				d.Read(buf)
			}
			allocs := testing.AllocsPerRun(200, func() {
				if _, err := d.Read(buf); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%s: %v allocations per Read in steady state, want 0", c, allocs)
			}
			d.Close()
		}
	}
}

// TestReadAllocsRunesAndLayers extends TestReadAllocs to the character cap
// and to a two-layer body: still no allocation per Read in steady state.
func TestReadAllocsRunesAndLayers(t *testing.T) {
	buf := make([]byte, 4096)
	body := layered(t, text(4<<20), "gzip", "br")
	for range 2 {
		d, err := NewReader(bytes.NewReader(body), "gzip, br", limits.Budget{MaxDecodedBytes: 8 << 20, MaxDecodedRunes: 8 << 20, MaxRatio: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			d.Read(buf)
		}
		if allocs := testing.AllocsPerRun(200, func() {
			if _, err := d.Read(buf); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("gzip, br with MaxDecodedRunes: %v allocations per Read, want 0", allocs)
		}
		d.Close()
	}
}
