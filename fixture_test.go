package boundhttp_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// bombFixture is the seed's gzip bomb, shared with examples/demo.
const bombFixture = "testdata/gzip-bomb-2MiB.gz"

// TestGzipBombFixture checks the fixture is the body the README and the
// demo describe: about 2 KiB that passes a 64 KiB compressed-size check,
// decodes (unbounded) to exactly 2,097,152 bytes of "a", and is rejected by
// a 64 KiB decoded budget one byte past the limit. A 2 MiB budget, the
// exact size, passes.
func TestGzipBombFixture(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(bombFixture)
	if err != nil {
		t.Fatal(err)
	}
	const sizeCheck, decodedSize = 64 << 10, 2 << 20
	if len(body) > sizeCheck || len(body) > 4<<10 {
		t.Errorf("%s is %d bytes, want about 2 KiB (at most 4 KiB, under the %d-byte check)", bombFixture, len(body), sizeCheck)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain, bytes.Repeat([]byte("a"), decodedSize)) {
		t.Errorf("%s decodes to %d bytes, want %d bytes of \"a\"", bombFixture, len(plain), decodedSize)
	}

	_, err = decoding.ReadAll(bytes.NewReader(body), "gzip", limits.Budget{MaxWireBytes: sizeCheck, MaxDecodedBytes: sizeCheck})
	var e *limits.Error
	if !errors.As(err, &e) || e.Stage != limits.StageDecoded || e.Limit != sizeCheck || e.Observed != sizeCheck+1 {
		t.Errorf("ReadAll(bomb, 64 KiB budget) = %v, want a decoded-stage error at %d, observed %d", err, sizeCheck, sizeCheck+1)
	}
	got, err := decoding.ReadAll(bytes.NewReader(body), "gzip", limits.Budget{MaxWireBytes: sizeCheck, MaxDecodedBytes: decodedSize})
	if err != nil || len(got) != decodedSize {
		t.Errorf("ReadAll(bomb, budget of exactly 2 MiB) = %d bytes, %v; want %d, nil", len(got), err, decodedSize)
	}
}
