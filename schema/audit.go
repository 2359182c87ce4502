package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Kinds of [Finding].
const (
	KindArray      = "array-without-maxItems"
	KindString     = "string-without-maxLength"
	KindObject     = "open-object"
	KindAny        = "any-value"
	KindRecursive  = "recursive-ref"
	KindUnresolved = "unresolved-ref"
)

// A Finding is one place in a schema that admits input of unbounded size.
type Finding struct {
	// Path is a JSON Pointer (RFC 6901) into the schema document.
	Path string `json:"path"`
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Message says what is missing.
	Message string `json:"message"`
}

func (f Finding) String() string { return f.Path + ": " + f.Message }

// parse decodes a JSON document keeping numbers exact.
func parse(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if d.More() {
		return nil, fmt.Errorf("schema: data after the document")
	}
	return v, nil
}

// walker visits a schema document, following local $refs.
type walker struct {
	root     any
	findings []Finding
	refs     []string // $refs being followed, to spot recursion
}

// Audit returns every place in the JSON Schema doc that admits input of
// unbounded size, in document order. An empty result means the schema is
// fully bounded.
func Audit(doc []byte) ([]Finding, error) {
	root, err := parse(doc)
	if err != nil {
		return nil, err
	}
	w := &walker{root: root}
	w.node("", root)
	return w.findings, nil
}

func (w *walker) add(path, kind, format string, args ...any) {
	if path == "" {
		path = "/"
	}
	w.findings = append(w.findings, Finding{Path: path, Kind: kind, Message: fmt.Sprintf(format, args...)})
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolve returns the target of a local $ref ("#", "#/$defs/x").
func resolve(root any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	cur := root
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return root, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// types returns the schema's "type" keyword as a set.
func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, v := range t {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func has(s map[string]any, k string) bool { _, ok := s[k]; return ok }

func (w *walker) node(path string, v any) {
	s, ok := v.(map[string]any)
	if !ok {
		if b, ok := v.(bool); ok && b {
			w.add(path, KindAny, "the schema true accepts any value; give it a type and ceilings")
		}
		return
	}
	if ref, ok := s["$ref"].(string); ok {
		w.ref(path, ref)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			for i, sub := range list {
				w.node(path+"/"+k+"/"+strconv.Itoa(i), sub)
			}
		}
	}
	ts := types(s)
	if len(ts) == 0 {
		if !has(s, "$ref") && !has(s, "enum") && !has(s, "const") && !has(s, "allOf") && !has(s, "anyOf") && !has(s, "oneOf") {
			w.add(path, KindAny, "no type, enum or const: any value is accepted, of any size")
		}
		return
	}
	if has(s, "enum") || has(s, "const") {
		return // the values are listed
	}
	for _, t := range ts {
		switch t {
		case "array":
			w.array(path, s)
		case "string":
			if !has(s, "maxLength") {
				w.add(path, KindString, "string without maxLength")
			}
		case "object":
			w.object(path, s)
		}
	}
}

func (w *walker) ref(path, ref string) {
	for _, r := range w.refs {
		if r == ref {
			w.add(path, KindRecursive, "recursive $ref %q: nesting has no ceiling", ref)
			return
		}
	}
	target, ok := resolve(w.root, ref)
	if !ok {
		w.add(path, KindUnresolved, "$ref %q cannot be resolved in this document", ref)
		return
	}
	w.refs = append(w.refs, ref)
	w.node(path+"/$ref", target)
	w.refs = w.refs[:len(w.refs)-1]
}

func (w *walker) array(path string, s map[string]any) {
	tuple, closed := tupleOf(s)
	if !has(s, "maxItems") && !closed {
		w.add(path, KindArray, "array without maxItems")
	}
	for i, sub := range tuple {
		key := "prefixItems"
		if _, ok := s["prefixItems"]; !ok {
			key = "items"
		}
		w.node(path+"/"+key+"/"+strconv.Itoa(i), sub)
	}
	if items, ok := s["items"]; ok {
		if _, isList := items.([]any); !isList {
			w.node(path+"/items", items)
		}
	}
	if add, ok := s["additionalItems"]; ok {
		if _, isBool := add.(bool); !isBool {
			w.node(path+"/additionalItems", add)
		}
	}
}

// tupleOf returns the positional item schemas (prefixItems, or an items
// array in older drafts) and whether no item may follow them.
func tupleOf(s map[string]any) ([]any, bool) {
	if p, ok := s["prefixItems"].([]any); ok {
		return p, s["items"] == false
	}
	if p, ok := s["items"].([]any); ok {
		return p, s["additionalItems"] == false
	}
	return nil, false
}

func (w *walker) object(path string, s map[string]any) {
	for _, kw := range []string{"properties", "patternProperties"} {
		members, _ := s[kw].(map[string]any)
		for _, n := range slices.Sorted(maps.Keys(members)) {
			w.node(path+"/"+kw+"/"+escapeToken(n), members[n])
		}
	}
	add, hasAdd := s["additionalProperties"]
	closed := hasAdd && add == false && !has(s, "patternProperties")
	if !closed && !has(s, "maxProperties") {
		w.add(path, KindObject, "object open to any number of members: set additionalProperties to false, or maxProperties")
	}
	if !closed && has(s, "maxProperties") {
		if pn, ok := s["propertyNames"].(map[string]any); !ok || !has(pn, "maxLength") {
			w.add(path, KindObject, "object with maxProperties but no propertyNames.maxLength: member names have no ceiling")
		}
	}
	if hasAdd {
		if _, isBool := add.(bool); !isBool {
			w.node(path+"/additionalProperties", add)
		} else if add == true && has(s, "maxProperties") {
			w.add(path+"/additionalProperties", KindAny, "additional members of any value")
		}
	} else if has(s, "maxProperties") {
		w.add(path+"/additionalProperties", KindAny, "additional members of any value (additionalProperties is absent)")
	}
}
