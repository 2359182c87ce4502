package main

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/boundhttp/boundhttp"
	spillfolder "github.com/boundhttp/boundhttp/internal/spill"
)

// defaultSpillChars is the -spill-chars default: the size above which
// Claude Code saves a tool's text result to a file instead of putting it in
// the model's context (50,000 characters).
const defaultSpillChars = 50000

// output is what fetch prints: the Result, and where its body went when it
// was spilled to a file. A spilled Result carries no body (Body and
// BodyBase64 are empty); Complete and Usage still describe the body.
type output struct {
	boundhttp.Result
	Spilled *Spill `json:"spilled,omitempty"`
	// SpillError says why a body over the threshold could not be saved.
	// The body is then withheld all the same, never printed.
	SpillError string `json:"spill_error,omitempty"`
}

// A Spill names the file that holds a body too long to print.
type Spill struct {
	// Path is the file's absolute path. The file holds the decoded body,
	// byte for byte, with mode 0600.
	Path string `json:"path"`
	// Chars is the body's size in characters as fetch prints it: its
	// JSON string with every escape counted (\u0000 is 6 characters) but
	// <, > and & as themselves, which fetch does not escape (see
	// printedChars), or its base64 form for a body that is not UTF-8; the
	// size compared with the threshold.
	Chars int64 `json:"chars"`
	// Bytes is the file's size in bytes.
	Bytes int64 `json:"bytes"`
	// Note tells the reader why the body is not here and what to do.
	Note string `json:"note"`
}

// spill moves r's body to a new file under dir when r holds a whole body
// (complete or http_error: never a preview, a rejection or a failure) of
// more than limit characters (limit >= 0), first removing the oldest
// spilled files until the folder's spilled files fit in maxBytes
// (maxBytes > 0). It returns r unchanged otherwise. dir is created (mode
// 0700) if missing, and refused unless it is private to this user.
func spill(r boundhttp.Result, dir string, limit, maxBytes int64) output {
	out := output{Result: r}
	chars := printedChars(&r)
	if !r.Complete || chars <= limit {
		return out
	}
	body := []byte(r.Body)
	ext := ".txt"
	if r.BodyBase64 != "" {
		var err error
		if body, err = base64.StdEncoding.DecodeString(r.BodyBase64); err != nil {
			out.SpillError = err.Error() // not expected: Result encodes it
		}
		ext = ".bin"
	}
	out.Body, out.BodyBase64 = "", ""
	if out.SpillError != "" {
		return out
	}
	path, err := writeSpill(dir, ext, body, maxBytes)
	if err != nil {
		out.SpillError = err.Error()
		return out
	}
	out.Spilled = &Spill{Path: path, Chars: chars, Bytes: int64(len(body)),
		Note: fmt.Sprintf("the body (%d characters, over the %d-character limit) was saved to the file at path instead of being printed; "+
			"read it from there, in parts if it is large", chars, limit)}
	return out
}

// writeSpill writes body to a new file under dir, mode 0600, after making
// room for it within maxBytes, and returns its absolute path. dir must be
// private to this user (see internal/spill): another user's folder, one
// open to others or a symbolic link is refused. A partly written file is
// removed.
func writeSpill(dir, ext string, body []byte, maxBytes int64) (string, error) {
	f := spillfolder.Folder{Dir: dir, MaxBytes: maxBytes, Owns: isSpillName}
	return f.Write(spillPrefix, ext, body)
}

// printedChars returns the characters of r's body as fetch prints it:
// [boundhttp.Result.BodyChars] counts <, > and & as the 6 characters of
// encoding/json's HTML escapes, and fetch writes them as one (its encoder
// does not escape HTML), so a body is spilled only when what would be
// printed is over the threshold.
func printedChars(r *boundhttp.Result) int64 {
	n := r.BodyChars()
	if r.BodyBase64 == "" {
		n -= 5 * int64(strings.Count(r.Body, "<")+strings.Count(r.Body, ">")+strings.Count(r.Body, "&"))
	}
	return n
}
