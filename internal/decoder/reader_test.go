package decoder

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

func TestOrdinaryAndEmpty(t *testing.T) {
	t.Parallel()
	for _, c := range codings {
		for _, n := range []int{0, 1, 100, 300 << 10} {
			data := text(n)
			got, err := decodeAll(t, encode(t, c, data), c, limits.Budget{})
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("ReadAll(%s of %d bytes) = %d bytes, %v; want the %d bytes back", c, n, len(got), err, n)
			}
		}
		// Zero wire bytes are an empty body under any coding.
		got, err := decodeAll(t, nil, c, limits.Budget{})
		if err != nil || len(got) != 0 {
			t.Errorf("ReadAll(%s, no bytes) = %q, %v; want empty, nil", c, got, err)
		}
	}
}

// TestDecodedBoundary: exactly N decoded bytes pass a limit of N, N+1 fail.
func TestDecodedBoundary(t *testing.T) {
	t.Parallel()
	const limit = 50000
	for _, c := range codings {
		for _, tt := range []struct {
			size  int
			stage string
		}{
			{0, ""}, {1, ""}, {limit - 1, ""}, {limit, ""}, {limit + 1, "decoded"}, {4 * limit, "decoded"},
		} {
			data := text(tt.size)
			body := encode(t, c, data)
			got, err := decodeAll(t, body, c, limits.Budget{MaxDecodedBytes: limit, MaxWireBytes: 1 << 20})
			if stageOf(err) != tt.stage {
				t.Errorf("ReadAll(%s, %d bytes, limit %d) = %v, want stage %q", c, tt.size, limit, err, tt.stage)
				continue
			}
			if err == nil && !bytes.Equal(got, data) {
				t.Errorf("ReadAll(%s, %d bytes) returned different bytes", c, tt.size)
			}
			var e *limits.Error
			if errors.As(err, &e) && (e.Limit != limit || e.Observed != limit+1 || e.Encoding != c) {
				t.Errorf("ReadAll(%s, %d bytes) = %+v, want limit %d observed %d encoding %s", c, tt.size, e, limit, limit+1, c)
			}
		}
	}
}

// TestWireBoundary: a body of exactly MaxWireBytes passes, one byte less of
// allowance fails at the wire stage.
func TestWireBoundary(t *testing.T) {
	t.Parallel()
	for _, c := range codings {
		body := encode(t, c, text(20000))
		n := int64(len(body))
		for _, tt := range []struct {
			limit int64
			stage string
		}{
			{1, "wire"}, {n - 1, "wire"}, {n, ""}, {n + 1, ""}, {1 << 40, ""},
		} {
			_, err := decodeAll(t, body, c, limits.Budget{MaxWireBytes: tt.limit})
			if stageOf(err) != tt.stage {
				t.Errorf("ReadAll(%s, %d wire bytes, wire limit %d) = %v, want stage %q", c, n, tt.limit, err, tt.stage)
				continue
			}
			var e *limits.Error
			if errors.As(err, &e) && (e.Limit != tt.limit || e.Observed != tt.limit+1) {
				t.Errorf("ReadAll(%s, wire limit %d) = %+v, want observed %d", c, tt.limit, e, tt.limit+1)
			}
		}
	}
}

// TestBombUnderWireLimit is the trap the whole library exists for: a body
// that passes a compressed-size check expands far past the decoded limit.
func TestBombUnderWireLimit(t *testing.T) {
	t.Parallel()
	run := bytes.Repeat([]byte("a"), 2<<20)
	for _, c := range codings[1:] {
		bomb := encode(t, c, run)
		if len(bomb) > 64<<10 {
			t.Fatalf("%s bomb is %d bytes, want it under 64 KiB", c, len(bomb))
		}
		b := limits.Budget{MaxWireBytes: 64 << 10, MaxDecodedBytes: 64 << 10}
		d, err := NewReader(bytes.NewReader(bomb), c, b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.ReadAll()
		if stageOf(err) != "decoded" || got != nil {
			t.Errorf("ReadAll(%s bomb of %d bytes) = %d bytes, %v; want stage decoded", c, len(bomb), len(got), err)
		}
		if u := d.Usage(); u.DecodedBytes != 64<<10+1 || u.WireBytes > int64(len(bomb)) {
			t.Errorf("Usage() after %s bomb = %v, want decoded %d and wire <= %d", c, u, 64<<10+1, len(bomb))
		}
	}
}

func TestInvalidBudgetAndOptions(t *testing.T) {
	t.Parallel()
	for _, b := range []limits.Budget{{MaxWireBytes: -1}, {MaxDecodedBytes: -1}, {MaxLayers: -1}, {MaxWindowBytes: -1}, {MaxRatio: -2}, {Timeout: -1}} {
		if _, err := NewReader(bytes.NewReader(nil), "gzip", b); err == nil {
			t.Errorf("NewReader(budget %+v) = nil error, want invalid", b)
		}
	}
	if _, err := NewReader(bytes.NewReader(nil), "gzip", limits.Budget{}, WithMaxMembers(-1)); err == nil {
		t.Errorf("NewReader(WithMaxMembers(-1)) = nil error, want invalid")
	}
}

// TestZeroFieldsTakeDefaults: zero is the default, never unlimited.
func TestZeroFieldsTakeDefaults(t *testing.T) {
	t.Parallel()
	def := limits.DefaultMaxDecodedBytes
	body := encode(t, "gzip", bytes.Repeat([]byte("x"), int(def)+1))
	if _, err := decodeAll(t, body, "gzip", limits.Budget{}); stageOf(err) != "decoded" {
		t.Errorf("ReadAll(default+1 bytes, zero budget) = %v, want stage decoded", err)
	}
	body = encode(t, "gzip", bytes.Repeat([]byte("x"), int(def)))
	if _, err := decodeAll(t, body, "gzip", limits.Budget{}); err != nil {
		t.Errorf("ReadAll(default bytes, zero budget) = %v, want nil", err)
	}
	wire := bytes.Repeat([]byte("x"), int(limits.DefaultMaxWireBytes)+1)
	if _, err := decodeAll(t, wire, "", limits.Budget{MaxDecodedBytes: 1 << 30}); stageOf(err) != "wire" {
		t.Errorf("ReadAll(identity default+1 bytes) = %v, want stage wire", err)
	}
	d, _ := NewReader(bytes.NewReader(nil), "", limits.Budget{})
	if got, want := d.Budget(), (limits.Budget{}).WithDefaults(); got != want {
		t.Errorf("Budget() = %+v, want %+v", got, want)
	}
}

func TestLayersAndEncodings(t *testing.T) {
	t.Parallel()
	data := text(30000)
	tests := []struct {
		ce     string
		apply  []string
		budget limits.Budget
		stage  string
	}{
		{"gzip, br", []string{"gzip", "br"}, limits.Budget{}, ""},
		{"br,gzip", []string{"br", "gzip"}, limits.Budget{}, ""},
		{"GZIP ,\tZstd", []string{"gzip", "zstd"}, limits.Budget{}, ""},
		{"x-gzip", []string{"gzip"}, limits.Budget{}, ""},
		{"identity, gzip, identity", []string{"gzip"}, limits.Budget{MaxLayers: 1}, ""},
		{"gzip, gzip, gzip", []string{"gzip", "gzip", "gzip"}, limits.Budget{}, "layers"},
		{"gzip, gzip, gzip", []string{"gzip", "gzip", "gzip"}, limits.Budget{MaxLayers: 3}, ""},
		{"gzip, deflate", []string{"gzip", "deflate"}, limits.Budget{MaxLayers: 1}, "layers"},
		{"compress", nil, limits.Budget{}, "encoding"},
		{"gzip, sdch", nil, limits.Budget{}, "encoding"},
		{"gzip;q=1", nil, limits.Budget{}, "encoding"},
	}
	for _, tt := range tests {
		body := layered(t, data, tt.apply...)
		src := &countingReader{r: bytes.NewReader(body)}
		got, err := ReadAll(src, tt.ce, tt.budget)
		if stageOf(err) != tt.stage {
			t.Errorf("ReadAll(%q) = %v, want stage %q", tt.ce, err, tt.stage)
			continue
		}
		if err == nil && !bytes.Equal(got, data) {
			t.Errorf("ReadAll(%q) returned different bytes", tt.ce)
		}
		if err != nil && src.reads != 0 {
			t.Errorf("ReadAll(%q) read the body %d times before failing at stage %s, want 0", tt.ce, src.reads, tt.stage)
		}
	}
}

// TestTwoLayerBomb: the inner layer is bounded too, so "gzip, gzip" cannot
// expand without bound between the layers.
func TestTwoLayerBomb(t *testing.T) {
	t.Parallel()
	size := 64 << 20
	if testing.Short() {
		size = 8 << 20 // still eight times the limit; the encoders dominate under -race
	}
	run := bytes.Repeat([]byte("a"), size)
	for _, pair := range [][2]string{{"gzip", "gzip"}, {"gzip", "br"}, {"zstd", "gzip"}, {"deflate", "zstd"}} {
		body := layered(t, run, pair[0], pair[1])
		ce := pair[0] + ", " + pair[1]
		_, err := decodeAll(t, body, ce, limits.Budget{MaxDecodedBytes: 1 << 20})
		var e *limits.Error
		if !errors.As(err, &e) || e.Stage != limits.StageDecoded || e.Observed != 1<<20+1 {
			t.Errorf("ReadAll(%q bomb of %d bytes) = %v, want stage decoded observed %d", ce, len(body), err, 1<<20+1)
		}
	}
}

// TestIntermediateLayerIsBounded: every layer's output is held to the
// decoded limit, not only the last one. Random bytes grow a little under
// gzip, so the br layer's output (the gzip bytes) is larger than the final
// body, which fits the limit exactly.
func TestIntermediateLayerIsBounded(t *testing.T) {
	t.Parallel()
	data := make([]byte, 40000)
	rand.NewChaCha8([32]byte{1}).Read(data)
	gz := encode(t, "gzip", data)
	body := encode(t, "br", gz)
	limit := int64(len(data))
	if _, err := decodeAll(t, encode(t, "gzip", data), "gzip", limits.Budget{MaxDecodedBytes: limit}); err != nil {
		t.Fatalf("ReadAll(gzip of exactly the limit) = %v, want nil", err)
	}
	_, err := decodeAll(t, body, "gzip, br", limits.Budget{MaxDecodedBytes: limit})
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageDecoded || e.Encoding != "br" {
		t.Errorf("ReadAll(gzip, br with a %d-byte middle layer, limit %d) = %v, want stage decoded in the br layer", len(gz), limit, err)
	}
	if _, err := decodeAll(t, body, "gzip, br", limits.Budget{MaxDecodedBytes: int64(len(gz))}); err != nil {
		t.Errorf("ReadAll(gzip, br, limit = middle layer %d) = %v, want nil", len(gz), err)
	}
}

// TestReadAllMemoryFollowsTheBody: memory grows with the bytes decoded, not
// with the limit or a hint: a 100-byte body under a 1 GiB limit, with a
// 1 GiB size hint, costs a few KiB.
func TestReadAllMemoryFollowsTheBody(t *testing.T) {
	body := encode(t, "gzip", text(100))
	b := limits.Budget{MaxDecodedBytes: 1 << 30, MaxWireBytes: 1 << 30}
	ReadAll(bytes.NewReader(body), "gzip", b) // warm the pools
	var got []byte
	n := allocated(func() {
		d, _ := NewReader(bytes.NewReader(body), "gzip", b)
		d.SetSizeHint(1 << 30)
		got, _ = d.ReadAll()
	})
	if len(got) != 100 || n > 64<<10 {
		t.Errorf("ReadAll(100-byte body, 1 GiB limit and hint): %d bytes, %d allocated; want 100 bytes and under 64 KiB", len(got), n)
	}
}
