package schema

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/boundhttp/boundhttp/limits"
)

// A bound is what the walk learnt of one schema: the largest size in bytes
// of a valid instance, or unbounded, and then why. Every unbounded bound
// has a finding of its own or an unbounded part (kids), so that a schema
// without a size always has a finding and a schema with one never has.
type bound struct {
	n    int64
	why  []Finding // findings at this schema
	kids []*bound  // unbounded parts this bound is unbounded through
	// explained: unbounded, with a finding here or in a part.
	explained bool
}

func fixed(n int64) *bound { return &bound{n: n} }

// plus adds the size of b, times k, to t.
func (t *bound) plus(b *bound, k int64) {
	t.n = add(t.n, mul(k, b.n))
	if k > 0 && b.n == unbounded {
		t.kids = append(t.kids, b)
		t.explained = t.explained || b.explained
	}
}

// least is the bound of a schema whose keywords each bound every instance
// (type, enum, allOf...): the smallest. Unbounded only when all are.
func least(bs []*bound) *bound {
	out := fixed(unbounded)
	for _, b := range bs {
		out.n = min(out.n, b.n)
	}
	if out.n == unbounded {
		out.kids = bs
		for _, b := range bs {
			out.explained = out.explained || b.explained
		}
	}
	return out
}

// most is the bound of a choice (anyOf, a list of types): the largest.
func most(bs []*bound) *bound {
	out := fixed(0)
	for _, b := range bs {
		out.n = max(out.n, b.n)
		if b.n == unbounded {
			out.kids = append(out.kids, b)
			out.explained = out.explained || b.explained
		}
	}
	return out
}

// walker visits a schema document once, following local $refs.
type walker struct {
	root any
	o    Options
	// refOnly: keywords beside $ref are ignored, as drafts 4 to 7 say.
	refOnly bool
	memo    map[string]*bound // by path: each schema is walked once
	busy    map[string]bool   // paths being walked, to spot recursion
}

// walk returns the worst-case size of an instance of root, or unbounded
// and the findings that say why (sorted by path, none when bounded).
func walk(root any, o Options) (int64, []Finding) {
	w := &walker{root: root, o: o, memo: map[string]*bound{}, busy: map[string]bool{}}
	if m, ok := root.(map[string]any); ok {
		d, _ := m["$schema"].(string)
		for _, old := range []string{"draft-04", "draft-06", "draft-07"} {
			w.refOnly = w.refOnly || strings.Contains(d, old)
		}
	}
	b := w.node("", root)
	if b.n != unbounded {
		return b.n, nil
	}
	return unbounded, collect(b)
}

// collect gathers the findings of b and its unbounded parts, each bound
// once (parts are shared through $ref), without duplicates.
func collect(b *bound) []Finding {
	seen := map[*bound]bool{}
	dup := map[Finding]bool{}
	var out []Finding
	stack := []*bound{b}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[b] {
			continue
		}
		seen[b] = true
		for _, f := range b.why {
			if !dup[f] {
				dup[f] = true
				out = append(out, f)
			}
		}
		stack = append(stack, b.kids...)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Message, b.Message))
	})
	return out
}

// open is an unbounded bound with one finding.
func open(path, kind, format string, args ...any) *bound {
	if path == "" {
		path = "/"
	}
	return &bound{n: unbounded, why: []Finding{{Path: path, Kind: kind, Message: fmt.Sprintf(format, args...)}}, explained: true}
}

// sealed gives b a finding at path when it is unbounded without one: a
// size that overflowed (maxItems 1e30 of strings), not a missing ceiling.
func sealed(path string, b *bound) *bound {
	if b.n == unbounded && !b.explained {
		if path == "" {
			path = "/"
		}
		b.why = append(b.why, Finding{Path: path, Kind: KindAny, Message: "the size has no bound below 2^63 bytes"})
		b.explained = true
	}
	return b
}

// node bounds the schema v found at path, once per path.
func (w *walker) node(path string, v any) *bound {
	if b, ok := w.memo[path]; ok {
		return b
	}
	w.busy[path] = true
	b := sealed(path, w.schema(path, v))
	delete(w.busy, path)
	w.memo[path] = b
	return b
}

func (w *walker) schema(path string, v any) *bound {
	s, ok := v.(map[string]any)
	if !ok {
		switch v {
		case true:
			return open(path, KindAny, "the schema true accepts any value; give it a type and ceilings")
		case false:
			return fixed(0)
		case nil:
			return open(path, KindAny, "no schema (null, or no inputSchema): any value is accepted")
		}
		return open(path, KindInvalid, "a schema is an object or a boolean, not %s", kindOf(v))
	}
	var parts []*bound // each keyword that bounds every instance
	if ref, ok := s["$ref"].(string); ok {
		parts = append(parts, w.ref(path, ref))
		if w.refOnly {
			return parts[0]
		}
	}
	if c, ok := s["const"]; ok {
		parts = append(parts, sealed(path, fixed(w.value(c))))
	}
	if e, ok := s["enum"].([]any); ok {
		var n int64
		for _, v := range e {
			n = max(n, w.value(v))
		}
		parts = append(parts, sealed(path, fixed(n)))
	}
	if has(s, "type") {
		parts = append(parts, w.typed(path, s))
	}
	if list, ok := s["allOf"].([]any); ok {
		for i, sub := range list {
			parts = append(parts, w.node(path+"/allOf/"+strconv.Itoa(i), sub))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			var bs []*bound
			for i, sub := range list {
				bs = append(bs, w.node(path+"/"+k+"/"+strconv.Itoa(i), sub))
			}
			parts = append(parts, most(bs))
		}
	}
	if len(parts) == 0 {
		return open(path, KindAny, "no type, enum or const: any value is accepted, of any size")
	}
	return least(parts)
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "a number"
}

func (w *walker) ref(path, ref string) *bound {
	target, at, ok := resolve(w.root, ref)
	if !ok {
		return open(path, KindUnresolved, "$ref %q cannot be resolved in this document", limits.Echo(ref))
	}
	if w.busy[at] {
		return open(path, KindRecursive, "recursive $ref %q: nesting has no ceiling", limits.Echo(ref))
	}
	return w.node(at, target)
}

// typed bounds an instance by the type keyword: the largest of its types.
func (w *walker) typed(path string, s map[string]any) *bound {
	var ts []string
	switch t := s["type"].(type) {
	case string:
		ts = []string{t}
	case []any:
		for _, v := range t {
			name, ok := v.(string)
			if !ok {
				return open(path, KindInvalid, "type lists %s, not a type name", kindOf(v))
			}
			ts = append(ts, name)
		}
	}
	if len(ts) == 0 {
		return open(path, KindInvalid, "type is neither a type name nor a list of them")
	}
	var bs []*bound
	for _, t := range ts {
		bs = append(bs, sealed(path, w.typeBound(path, t, s)))
	}
	return most(bs)
}

func (w *walker) typeBound(path, t string, s map[string]any) *bound {
	switch t {
	case "null":
		return fixed(4)
	case "boolean":
		return fixed(5)
	case "number":
		return fixed(numberBound(s))
	case "integer":
		return fixed(integerBound(s))
	case "string":
		return w.str(path, s)
	case "array":
		return w.array(path, s)
	case "object":
		return w.object(path, s)
	}
	return open(path, KindInvalid, "unknown type %q: no instance can be bounded", limits.Echo(t))
}
