package mcpcore

import (
	"strings"

	"github.com/boundhttp/boundhttp/internal/spill"
)

// spillPrefix and spillSuffix frame the names of the files this package
// writes; only such files count towards, and are removed for,
// MaxSpillBytes.
const (
	spillPrefix = "mcp-result-"
	spillSuffix = ".txt"
)

// spill writes text to a new file (mode 0600) under SpillDir, a folder
// private to this user (see internal/spill), after removing the oldest
// earlier result files while the folder's result files and the new one
// together would exceed MaxSpillBytes. It returns the file's absolute path.
func (c *Client) spill(tool, text string) (string, error) {
	f := spill.Folder{Dir: c.SpillDir, MaxBytes: c.MaxSpillBytes, Owns: func(name string) bool {
		return strings.HasPrefix(name, spillPrefix) && strings.HasSuffix(name, spillSuffix)
	}}
	return f.Write(spillPrefix+safeName(tool)+"-", spillSuffix, []byte(text))
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
