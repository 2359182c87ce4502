package schema

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/boundhttp/boundhttp/limits"
)

// A bound is what the walk learnt of one schema: the largest size in bytes
// of a valid instance, or unbounded, and then why. Every unbounded bound
// has a note of its own or an unbounded part (kids) that is explained, so
// that a schema without a size always has a finding and a schema with one
// never has.
type bound struct {
	n    int64
	why  []note   // findings at this schema
	kids []*bound // unbounded parts this bound is unbounded through
	// explained: unbounded, with a note here or in a part.
	explained bool
}

// A note is a [Finding] whose path is not written out yet.
type note struct {
	at            *ptr
	kind, message string
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

// open is an unbounded bound with one finding.
func open(at *ptr, kind, format string, args ...any) *bound {
	return &bound{n: unbounded, why: []note{{at, kind, fmt.Sprintf(format, args...)}}, explained: true}
}

// sealed gives b a finding at at when it is unbounded without one: a size
// that overflowed (maxItems 1e30 of strings), not a missing ceiling.
func sealed(at *ptr, b *bound) *bound {
	if b.n == unbounded && !b.explained {
		b.why = append(b.why, note{at, KindAny, "the size has no bound below 2^63 bytes"})
		b.explained = true
	}
	return b
}

// walker visits a schema document once, following local $refs.
type walker struct {
	root any
	o    Options
	// refOnly: keywords beside $ref are ignored, as drafts 4 to 7 say.
	refOnly bool
	// noPrefix: the dialect predates prefixItems (drafts 3 to 2019-09),
	// whose validators apply items to every item.
	noPrefix bool
	// oldID: the dialect names a resource with id, not $id (drafts 3, 4).
	oldID bool
	// Each schema object is walked once: its bound is kept by identity,
	// and the ones being walked are busy, to spot recursion.
	memo map[uintptr]*bound
	busy map[uintptr]bool
	// base is the schema resource a "#..." $ref is resolved in: the
	// nearest enclosing schema with an $id, or the root; baseAt is where.
	base   any
	baseAt *ptr
}

// maxDepth is the most schemas the walk holds open at once, as many as
// the levels of nesting encoding/json reads: deeper nesting only comes from
// a chain of $refs, which the walk would otherwise follow on the call
// stack as far as it goes (a million of them pass Go's 1 GB stack limit).
// Deeper is unbounded, with a finding: a safe over-approximation.
const maxDepth = 10000

// maxFindings is the most findings a walk writes out; one more then says
// how many were left out.
const maxFindings = 100

// maxPathBytes is the most bytes of paths a walk writes out: past it, the
// remaining findings are counted as if past maxFindings, so that a long
// key above many findings cannot multiply the output.
const maxPathBytes = 1 << 20

// widest is the most a size under the default Options can be, as a
// multiple of the size of the same schema under UTF8: DEL takes 6 bytes
// for 1.
const widest = 6

// walk returns the worst-case size of an instance of root, or unbounded
// and the findings that say why (sorted by path, none when bounded).
// Whether there is a bound does not depend on o: it is decided for the
// widest encoder (the default, which escapes non-ASCII), so that Audit,
// which takes no options, agrees with WorstCase under any. Only a size
// under UTF8 above 2^63/widest can differ, and only then is the schema
// walked a second time.
func walk(root any, o Options) (int64, []Finding) {
	n, findings := walkAs(root, o)
	if n != unbounded && o.UTF8 && n > unbounded/widest {
		if m, wide := walkAs(root, Options{}); m == unbounded {
			return m, wide
		}
	}
	return n, findings
}

func walkAs(root any, o Options) (int64, []Finding) {
	w := &walker{root: root, o: o, memo: map[uintptr]*bound{}, busy: map[uintptr]bool{}, base: root}
	if m, ok := root.(map[string]any); ok {
		d, _ := m["$schema"].(string)
		for _, old := range []string{"draft-04", "draft-06", "draft-07"} {
			w.refOnly = w.refOnly || strings.Contains(d, old)
		}
		w.noPrefix = w.refOnly || strings.Contains(d, "draft-03") || strings.Contains(d, "2019-09")
		w.oldID = strings.Contains(d, "draft-03") || strings.Contains(d, "draft-04")
	}
	b := w.node(nil, root)
	if b.n != unbounded {
		return b.n, nil
	}
	return unbounded, collect(b)
}

// collect gathers the findings of b and its unbounded parts, each bound
// once (parts are shared through $ref), without duplicates, at most
// maxFindings of them and paths of about maxPathBytes: the time is linear
// in the number of bounds and in the length of the paths written.
func collect(b *bound) []Finding {
	seen := map[*bound]bool{}
	dup := map[note]bool{}
	var out []Finding
	left, written := 0, 0
	stack := []*bound{b}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[b] {
			continue
		}
		seen[b] = true
		for _, n := range b.why {
			switch {
			case dup[n]:
			case len(out) == maxFindings || written >= maxPathBytes:
				left++
			default:
				dup[n] = true
				path := n.at.String()
				written += len(path)
				out = append(out, Finding{Path: path, Kind: n.kind, Message: n.message})
			}
		}
		stack = append(stack, b.kids...)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Kind, b.Kind), strings.Compare(a.Message, b.Message))
	})
	if left > 0 {
		out = append(out, Finding{Path: "/", Kind: KindAny, Message: fmt.Sprintf("and %d more places without a ceiling", left)})
	}
	return out
}

// node bounds the schema v found at at, once per schema object.
func (w *walker) node(at *ptr, v any) *bound {
	m, ok := v.(map[string]any)
	if !ok {
		return sealed(at, w.schema(at, v)) // true, false, or not a schema: no parts
	}
	id := reflect.ValueOf(m).Pointer()
	if b, ok := w.memo[id]; ok {
		return b
	}
	if len(w.busy) >= maxDepth { // not kept: a shallower path may walk it
		return open(at, KindInvalid, "schemas nested more than %d deep (through $ref): no bound is computed below", maxDepth)
	}
	w.busy[id] = true
	base, baseAt := w.base, w.baseAt
	if w.resource(m) {
		w.base, w.baseAt = m, at
	}
	b := sealed(at, w.schema(at, m))
	w.base, w.baseAt = base, baseAt
	delete(w.busy, id)
	w.memo[id] = b
	return b
}

func (w *walker) schema(at *ptr, v any) *bound {
	s, ok := v.(map[string]any)
	if !ok {
		switch v {
		case true:
			return open(at, KindAny, "the schema true accepts any value; give it a type and ceilings")
		case false:
			return fixed(0)
		case nil:
			return open(at, KindAny, "no schema (null, or no inputSchema): any value is accepted")
		}
		return open(at, KindInvalid, "a schema is an object or a boolean, not %s", kindOf(v))
	}
	var parts []*bound // each keyword that bounds every instance
	if ref, ok := s["$ref"].(string); ok {
		parts = append(parts, w.ref(at, ref))
		if w.refOnly {
			return parts[0]
		}
	}
	if c, ok := s["const"]; ok {
		parts = append(parts, sealed(at, fixed(w.value(c))))
	}
	if e, ok := s["enum"].([]any); ok {
		var n int64
		for _, v := range e {
			n = max(n, w.value(v))
		}
		parts = append(parts, sealed(at, fixed(n)))
	}
	if has(s, "type") {
		parts = append(parts, w.typed(at, s))
	}
	if list, ok := s["allOf"].([]any); ok {
		for i, sub := range list {
			parts = append(parts, w.node(at.to("allOf", strconv.Itoa(i)), sub))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			var bs []*bound
			for i, sub := range list {
				bs = append(bs, w.node(at.to(k, strconv.Itoa(i)), sub))
			}
			parts = append(parts, most(bs))
		}
	}
	if len(parts) == 0 {
		return open(at, KindAny, "no type, enum or const: any value is accepted, of any size")
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

// resource reports whether the schema s is a schema resource of its own,
// in which a "#..." $ref is resolved: it has an $id (id in drafts 3 and 4)
// that is more than a fragment, not beside a $ref that makes it ignored.
func (w *walker) resource(s map[string]any) bool {
	if w.refOnly && has(s, "$ref") {
		return false
	}
	id, ok := s["$id"].(string)
	if w.oldID {
		id, ok = s["id"].(string)
	}
	uri, _, _ := strings.Cut(id, "#")
	return ok && uri != ""
}

func (w *walker) ref(at *ptr, ref string) *bound {
	target, to, base, baseAt, ok := w.resolve(ref)
	if !ok {
		return open(at, KindUnresolved, "$ref %q cannot be resolved in this document", limits.Echo(ref))
	}
	if m, ok := target.(map[string]any); ok && w.busy[reflect.ValueOf(m).Pointer()] {
		return open(at, KindRecursive, "recursive $ref %q: nesting has no ceiling", limits.Echo(ref))
	}
	saved, savedAt := w.base, w.baseAt
	w.base, w.baseAt = base, baseAt
	b := w.node(to, target)
	w.base, w.baseAt = saved, savedAt
	return b
}

// typed bounds an instance by the type keyword: the largest of its types.
func (w *walker) typed(at *ptr, s map[string]any) *bound {
	var ts []string
	switch t := s["type"].(type) {
	case string:
		ts = []string{t}
	case []any:
		for _, v := range t {
			name, ok := v.(string)
			if !ok {
				return open(at, KindInvalid, "type lists %s, not a type name", kindOf(v))
			}
			ts = append(ts, name)
		}
	}
	if len(ts) == 0 {
		return open(at, KindInvalid, "type is neither a type name nor a list of them")
	}
	var bs []*bound
	seen := map[string]bool{}
	for _, t := range ts {
		if !seen[t] { // once each: an object's walk is as long as its properties
			seen[t] = true
			bs = append(bs, sealed(at, w.typeBound(at, t, s)))
		}
	}
	return most(bs)
}

func (w *walker) typeBound(at *ptr, t string, s map[string]any) *bound {
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
		return w.str(at, s)
	case "array":
		return w.array(at, s)
	case "object":
		return w.object(at, s)
	}
	return open(at, KindInvalid, "unknown type %q: no instance can be bounded", limits.Echo(t))
}
