package boundhttp

import (
	"mime"
	"strings"
)

// isJSON reports whether a Content-Type names JSON: application/json,
// text/json or any type with the +json suffix (RFC 6839). Malformed
// parameters do not hide the type: "application/json; charset" is JSON, so
// that a sloppy or hostile sender cannot skip the shape check with them.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}
