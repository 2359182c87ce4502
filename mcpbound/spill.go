package mcpbound

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// spillPrefix and spillSuffix frame the names of the files this package
// writes; only such files count towards, and are removed for,
// MaxSpillBytes.
const (
	spillPrefix = "mcp-result-"
	spillSuffix = ".txt"
)

// spill writes text to a new file (mode 0600) under SpillDir, after removing
// the oldest earlier result files while the folder's result files and the
// new one together would exceed MaxSpillBytes. It returns the file's
// absolute path.
func (c *clientCaps) spill(tool, text string) (string, error) {
	size := int64(len(text))
	if size > c.MaxSpillBytes {
		return "", fmt.Errorf("%d bytes, more than the result folder may hold (%d bytes)", size, c.MaxSpillBytes)
	}
	c.spillMu.Lock()
	defer c.spillMu.Unlock()
	if err := os.MkdirAll(c.SpillDir, 0o700); err != nil {
		return "", err
	}
	if err := c.makeRoom(size); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(c.SpillDir, spillPrefix+safeName(tool)+"-*"+spillSuffix) // 0600, O_EXCL
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// makeRoom removes the oldest result files until size more bytes fit.
func (c *clientCaps) makeRoom(size int64) error {
	entries, err := os.ReadDir(c.SpillDir)
	if err != nil {
		return err
	}
	type file struct {
		name string
		size int64
		mod  int64
	}
	var files []file
	var sum int64
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, spillPrefix) || !strings.HasSuffix(n, spillSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, file{n, info.Size(), info.ModTime().UnixNano()})
		sum += info.Size()
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].mod != files[j].mod {
			return files[i].mod < files[j].mod
		}
		return files[i].name < files[j].name
	})
	for _, f := range files {
		if sum+size <= c.MaxSpillBytes {
			break
		}
		if err := os.Remove(filepath.Join(c.SpillDir, f.name)); err != nil && !os.IsNotExist(err) {
			return err
		}
		sum -= f.size
	}
	if sum+size > c.MaxSpillBytes {
		return fmt.Errorf("result folder %s is full", c.SpillDir)
	}
	return nil
}

// safeName returns tool reduced to at most 40 letters, digits, '-' and '_',
// for a file name.
func safeName(tool string) string {
	var b strings.Builder
	for _, r := range tool {
		if b.Len() == 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
