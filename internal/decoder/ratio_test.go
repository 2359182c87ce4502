package decoder

import (
	"bytes"
	"io"
	"math/rand"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestRatioCheckedOnLastRead pins the trap "the last Read unchecked": flate
// returns its last bytes together with io.EOF, and the ratio was checked
// only when err was nil, so 31 KiB of zeros (ratio ~480) passed MaxRatio 10
// while 32 KiB failed. Past the grace, a body over the ratio fails whatever
// its size; within the grace it passes (documented on limits.RatioGrace).
func TestRatioCheckedOnLastRead(t *testing.T) {
	t.Parallel()
	const g = limits.RatioGrace
	for _, tt := range []struct {
		n     int
		stage string
	}{
		{g - 1, ""}, {g, ""}, {g + 1, "ratio"}, {31 << 10, "ratio"}, {32 << 10, "ratio"},
		{64 << 10, "ratio"}, {1 << 20, "ratio"},
	} {
		zeros := make([]byte, tt.n)
		for _, c := range []string{"gzip", "deflate", "br", "zstd"} {
			body := encode(t, c, zeros)
			b := limits.Budget{MaxRatio: 10}
			if _, err := decodeAll(t, body, c, b); stageOf(err) != tt.stage {
				t.Errorf("ReadAll(%d zeros, %s, MaxRatio 10) = %v, want stage %q", tt.n, c, err, tt.stage)
			}
			// Streaming with one buffer larger than the body: the last
			// bytes come with io.EOF.
			d, _ := NewReader(bytes.NewReader(body), c, b)
			buf := make([]byte, 2<<20)
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				_, err = d.Read(buf)
			}
			if err == io.EOF {
				err = nil
			}
			if stageOf(err) != tt.stage {
				t.Errorf("Read(%d zeros, %s, MaxRatio 10) = %v, want stage %q", tt.n, c, err, tt.stage)
			}
		}
	}
	// A body under the ratio passes at any size.
	random := make([]byte, 256<<10)
	rand.Read(random)
	for _, c := range []string{"gzip", "deflate", "br", "zstd"} {
		got, err := decodeAll(t, encode(t, c, random), c, limits.Budget{MaxRatio: 1.5})
		if err != nil || !bytes.Equal(got, random) {
			t.Errorf("ReadAll(random, %s, MaxRatio 1.5) = %d bytes, %v, want the body", c, len(got), err)
		}
	}
}

// TestRatioIsRunningNotOverall pins what MaxRatio's verdict is monotonic
// in. The ratio is checked on every read against the bytes decoded and
// read so far, so a body fails when its running ratio ever exceeds the
// limit: a body whose first part is a bomb fails even when its overall
// ratio is lower than that of a body that passes. The early warning is the
// point of MaxRatio, and no early check can be monotonic in the overall
// ratio. What holds is monotonicity in the limit: a body that passes a
// limit passes every higher one.
func TestRatioIsRunningNotOverall(t *testing.T) {
	t.Parallel()
	noise := make([]byte, 400<<10)
	rand.New(rand.NewSource(1)).Read(noise)
	bombFirst := append(bytes.Repeat([]byte{0}, 100<<10), noise...)              // overall ~1.25
	bombLast := append(append([]byte(nil), noise[:50<<10]...), text(200<<10)...) // overall ~3.5
	lo, hi := encode(t, "gzip", bombFirst), encode(t, "gzip", bombLast)
	if rl, rh := float64(len(bombFirst))/float64(len(lo)), float64(len(bombLast))/float64(len(hi)); rl >= rh {
		t.Fatalf("overall ratios %.2f and %.2f: the test case is wrong", rl, rh)
	}
	if _, err := decodeAll(t, lo, "gzip", limits.Budget{MaxRatio: 10}); stageOf(err) != "ratio" {
		t.Errorf("ReadAll(zeros then noise, MaxRatio 10) = %v, want stage ratio (running ratio ~25)", err)
	}
	if _, err := decodeAll(t, hi, "gzip", limits.Budget{MaxRatio: 10}); err != nil {
		t.Errorf("ReadAll(noise then text, MaxRatio 10) = %v, want nil", err)
	}
	for _, body := range [][]byte{lo, hi} {
		passed := false
		for _, r := range []float64{1, 2, 4, 8, 16, 32, 64, 1e3, 1e6} {
			_, err := decodeAll(t, body, "gzip", limits.Budget{MaxRatio: r})
			if passed && err != nil {
				t.Errorf("body of %d wire bytes passes a lower MaxRatio but fails %v: %v", len(body), r, err)
			}
			passed = passed || err == nil
		}
	}
}

func TestRatio(t *testing.T) {
	t.Parallel()
	bomb := encode(t, "gzip", bytes.Repeat([]byte("r"), 1<<20)) // ratio ~ 1000
	prose := encode(t, "gzip", text(1<<20))                     // ratio ~ 10
	tests := []struct {
		name  string
		body  []byte
		ratio float64
		stage string
	}{
		{"bomb, ratio off", bomb, 0, ""},
		{"bomb, ratio 100", bomb, 100, "ratio"},
		{"prose, ratio 100", prose, 100, ""},
		{"prose, ratio 2", prose, 2, "ratio"},
		{"tiny bomb under the grace", encode(t, "gzip", bytes.Repeat([]byte("r"), limits.RatioGrace)), 1, ""},
	}
	for _, tt := range tests {
		d, _ := NewReader(bytes.NewReader(tt.body), "gzip", limits.Budget{MaxRatio: tt.ratio})
		out, err := readInPieces(d, 4096)
		if err == io.EOF {
			err = nil
		}
		if stageOf(err) != tt.stage {
			t.Errorf("%s: %v, want stage %q", tt.name, err, tt.stage)
		}
		if tt.stage != "" && len(out) > limits.RatioGrace+2*4096*int(tt.ratio)+(64<<10) {
			t.Errorf("%s: %d bytes returned before the ratio tripped, want it early", tt.name, len(out))
		}
	}
}

// TestRatioBoundary measures a body's final ratio R and checks that a
// limit a little above R passes and one well below it fails.
func TestRatioBoundary(t *testing.T) {
	t.Parallel()
	body := encode(t, "gzip", text(1<<20))
	d, _ := NewReader(bytes.NewReader(body), "gzip", limits.Budget{})
	if _, err := readInPieces(d, 4096); err != io.EOF {
		t.Fatal(err)
	}
	u := d.Usage()
	r := float64(u.DecodedBytes) / float64(u.WireBytes)
	for _, tt := range []struct {
		limit float64
		stage string
	}{{r * 1.05, ""}, {r / 1.5, "ratio"}} {
		_, err := decodeAll(t, body, "gzip", limits.Budget{MaxRatio: tt.limit})
		if stageOf(err) != tt.stage {
			t.Errorf("ReadAll(body of ratio %.2f, MaxRatio %.2f) = %v, want stage %q", r, tt.limit, err, tt.stage)
		}
	}
}
