package decoder

import (
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// walkAll walks b through a new frameInspector in pieces that end at cuts
// (offsets into b, in order), then finishes; it returns the verdict, the
// frames counted and the content declared.
func walkAll(b []byte, cuts []int, maxWindow, maxContent int64) (err error, frames int, content uint64) {
	d := new(Reader)
	d.b = limits.Budget{MaxWindowBytes: maxWindow, MaxDecodedBytes: maxContent}.WithDefaults()
	f := frameInspector{d: d, maxFrames: 1 << 16, maxWindow: maxWindow, maxContent: maxContent}
	at := 0
	for _, c := range append(cuts, len(b)) {
		if c < at || c > len(b) {
			continue
		}
		if err := f.walk(b[at:c]); err != nil {
			return err, f.frames, f.content
		}
		at = c
	}
	return f.finish(), f.frames, f.content
}

// FuzzZstdFrameWalkIgnoresReadBoundaries: the zstd frame inspector parses
// a peer's bytes as they come, in reads of any size: its verdict (which
// error, or none), the frames it counts and the content it sums must not
// depend on where the reads end. Each input is walked whole and cut at the
// offsets the fuzzer chooses, and (up to 4 KiB) at every byte.
func FuzzZstdFrameWalkIgnoresReadBoundaries(f *testing.F) {
	for _, seed := range [][]byte{
		encode(f, "zstd", []byte("hello")),
		append(encode(f, "zstd", text(3000)), encode(f, "zstd", text(10))...),
		{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3}, // a skippable frame
		{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3},       // a header declaring 8 MiB, then nothing
	} {
		f.Add(seed, uint16(1), uint16(7))
	}
	f.Fuzz(func(t *testing.T, b []byte, c1, c2 uint16) {
		if len(b) > 1<<16 {
			return
		}
		const window, content = 8 << 20, 1 << 30
		whole, frames, sum := walkAll(b, nil, window, content)
		cuts := []int{int(c1) % (len(b) + 1), int(c2) % (len(b) + 1)}
		if cuts[0] > cuts[1] {
			cuts[0], cuts[1] = cuts[1], cuts[0]
		}
		walks := [][]int{cuts}
		if len(b) <= 4096 { // every byte: a walk per byte, so small inputs only
			every := make([]int, len(b))
			for i := range every {
				every[i] = i
			}
			walks = append(walks, every)
		}
		for _, cs := range walks {
			err, fr, s := walkAll(b, cs, window, content)
			if errText(err) != errText(whole) || fr != frames || s != sum {
				t.Fatalf("cut at %v: %v, %d frames, %d declared; whole: %v, %d frames, %d declared", cs[:min(len(cs), 4)], err, fr, s, whole, frames, sum)
			}
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
