package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/limits"
)

// Kinds of [Finding].
const (
	KindArray      = "array-without-maxItems"
	KindString     = "string-without-maxLength"
	KindObject     = "open-object"
	KindAny        = "any-value"
	KindRecursive  = "recursive-ref"
	KindUnresolved = "unresolved-ref"
	// KindInvalid is a keyword the audit cannot read as a ceiling: an
	// unknown type, a value where a schema is expected, or schemas nested
	// more than 10,000 deep through a chain of $refs.
	KindInvalid = "invalid-schema"
)

// A Finding is one place in a schema that admits input of unbounded size.
type Finding struct {
	// Path is a JSON Pointer (RFC 6901) into the schema document: the
	// place itself, or, for an unresolved or recursive $ref, the schema
	// that holds the $ref. A definition reached through $ref is reported
	// once, at its own place (/$defs/name/...). The root is "/".
	Path string `json:"path"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Message says what is missing.
	Message string `json:"message"`
}

// String returns the finding as text for logs: the path as
// [limits.EchoPointer] shortens it, then the message.
func (f Finding) String() string { return limits.EchoPointer(f.Path) + ": " + f.Message }

// parse decodes a JSON document keeping numbers exact.
func parse(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	// Only white space may follow (More is false before a stray ] or }).
	end := d.InputOffset()
	if len(bytes.TrimLeft(doc[end:], " \t\r\n")) > 0 {
		return nil, fmt.Errorf("schema: data after the document")
	}
	if at := mergedKey(doc[:end]); at >= 0 {
		return nil, fmt.Errorf("schema: the object key at byte %d holds a lone surrogate escape or bytes that are not UTF-8: "+
			"Go reads them as U+FFFD, merging keys that JavaScript and Python keep apart", at)
	}
	return v, nil
}

// mergedKey returns the offset of the first object key in doc, a valid
// JSON text, that Go's decoder does not keep as written: one with a lone
// surrogate escape (\ud800) or bytes that are not UTF-8, both read as
// U+FFFD, so that two keys apart elsewhere become one. -1 when there is
// none. The scan is linear in the length of doc.
func mergedKey(doc []byte) int {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		start, lossy := i, false
		for i++; doc[i] != '"'; i++ {
			if doc[i] != '\\' {
				continue
			}
			i++
			if doc[i] != 'u' {
				continue
			}
			r, _ := strconv.ParseUint(string(doc[i+1:i+5]), 16, 32)
			i += 4
			switch {
			case r >= 0xd800 && r < 0xdc00 && i+6 < len(doc) && doc[i+1] == '\\' && doc[i+2] == 'u':
				lo, _ := strconv.ParseUint(string(doc[i+3:i+7]), 16, 32)
				if lo >= 0xdc00 && lo < 0xe000 {
					i += 6 // a pair
				} else {
					lossy = true
				}
			case r >= 0xd800 && r < 0xe000:
				lossy = true
			}
		}
		if !lossy && utf8.Valid(doc[start:i]) {
			continue
		}
		j := i + 1
		for j < len(doc) && (doc[j] == ' ' || doc[j] == '\t' || doc[j] == '\n' || doc[j] == '\r') {
			j++
		}
		if j < len(doc) && doc[j] == ':' {
			return start
		}
	}
	return -1
}

// Audit returns every place in the JSON Schema doc that admits input of
// unbounded size, sorted by path. An empty result means the schema is fully
// bounded, exactly when [WorstCase] returns a size: both come from one walk
// of the document. A place inside a part that another keyword bounds (an
// allOf branch beside a bounded one, a string type beside an enum) is not a
// finding; a place inside an unbounded one (the items of an array without
// maxItems, the members of an open object) is, so that fixing every
// finding of one pass leaves none.
//
// The walk visits each schema object of the document once, whatever its
// $refs, and writes a path out only for a finding; at most 100 findings,
// and paths of about 1 MiB in all, are written, then one more (at "/")
// says how many places were left out.
// Time and memory are linear in the size of doc. A document that is not
// JSON, or that has an object key Go's decoder cannot keep apart from
// others (a lone surrogate escape, bytes that are not UTF-8), is an error,
// for Audit, [WorstCase], [AuditTool] and [AuditTools] alike.
func Audit(doc []byte) ([]Finding, error) {
	root, err := parse(doc)
	if err != nil {
		return nil, err
	}
	_, findings := walk(root, Options{})
	return findings, nil
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolve returns the target of a local $ref ("#", "#/$defs/x",
// "#/$defs/a%20b"), read in the current resource, where it is (nil for the
// root), and the resource it is in and where that is.
func (w *walker) resolve(ref string) (target any, to *ptr, base any, baseAt *ptr, ok bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, nil, nil, nil, false
	}
	cur, at := w.base, w.baseAt
	base, baseAt = cur, at
	// The fragment is percent-decoded before it is read as a pointer
	// (RFC 6901, section 6), as validators do: %25 is "%", %2F a "/".
	p, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil {
		return nil, nil, nil, nil, false
	}
	if p == "" {
		return cur, at, base, baseAt, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, nil, nil, nil, false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, nil, nil, nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, nil, nil, nil, false
			}
			cur = c[i]
		default:
			return nil, nil, nil, nil, false
		}
		at = at.to(escapeToken(tok))
		if m, ok := cur.(map[string]any); ok && w.resource(m) {
			base, baseAt = m, at // the target lies in this resource
		}
	}
	return cur, at, base, baseAt, true
}

func has(s map[string]any, k string) bool { _, ok := s[k]; return ok }
