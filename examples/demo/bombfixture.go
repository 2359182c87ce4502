package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/gzip"
)

// bombFixture is the repository's gzip bomb, relative to the module root.
const bombFixture = "testdata/gzip-bomb-2MiB.gz"

// gzipBomb returns the gzip body of data: the file bombFixture when the
// demo runs inside the repository (go run ./examples/demo from the root, or
// go test in examples/demo: the directories above the working one are
// searched), and a body compressed here otherwise (a binary run elsewhere).
// It names where the body came from. A fixture that does not decode to data
// is an error, never replaced silently.
func gzipBomb(data []byte) ([]byte, string, error) {
	dir, err := os.Getwd()
	for err == nil {
		path := filepath.Join(dir, bombFixture)
		body, rerr := os.ReadFile(path)
		if rerr == nil {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				return nil, "", fmt.Errorf("%s: %v", path, err)
			}
			if plain, err := io.ReadAll(zr); err != nil || !bytes.Equal(plain, data) {
				return nil, "", fmt.Errorf("%s does not decode to the %d-byte bomb (%d bytes, %v)", path, len(data), len(plain), err)
			}
			return body, bombFixture, nil
		}
		if !errors.Is(rerr, fs.ErrNotExist) {
			return nil, "", rerr
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	body, err := compress("gzip", data)
	return body, "compressed here (" + bombFixture + " not found)", err
}
