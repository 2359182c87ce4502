package boundhttp_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// apacheSHA256 is the SHA-256 of the Apache License 2.0 exactly as the
// Apache Software Foundation publishes it (LICENSE-2.0.txt, 11358 bytes).
// License detectors such as pkg.go.dev's recognise the text only when it is
// unaltered; the copyright line lives in NOTICE, not in the license.
const apacheSHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// TestEveryModuleCarriesTheLicense pins the trap of a module without a
// license file: the Go tooling looks for LICENSE in the module's own folder,
// so a nested module (mcpbound, a store of its own, a test module) shows no
// license, and no documentation on pkg.go.dev, unless it has its own copy.
// Every folder with a go.mod holds LICENSE, the unaltered Apache License
// 2.0, and NOTICE with the copyright line.
func TestEveryModuleCarriesTheLicense(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(want); hex.EncodeToString(sum[:]) != apacheSHA256 {
		t.Errorf("LICENSE is not the unaltered Apache License 2.0 (sha256 %x)", sum)
	}
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(notice, []byte("Copyright 2026 The boundhttp Authors")) {
		t.Errorf("NOTICE has no copyright line:\n%s", notice)
	}
	var modules []string
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || (d.Name() != "." && d.Name()[0] == '.')) {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" {
			modules = append(modules, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(modules) < 2 {
		t.Fatalf("found modules %q, want the root and the nested ones", modules)
	}
	for _, dir := range modules {
		for name, want := range map[string][]byte{"LICENSE": want, "NOTICE": notice} {
			got, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("module %s: %v", dir, err)
			} else if !bytes.Equal(got, want) {
				t.Errorf("module %s: %s differs from the root's", dir, name)
			}
		}
	}
}
