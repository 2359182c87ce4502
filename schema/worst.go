package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Options states the assumptions behind [WorstCase] about how a client
// serialises an instance.
//
// Separators are counted as ", " and ": " (2 bytes each, Python's default;
// compact encoders use 1), with no other whitespace: pretty-printed requests
// are not covered, which is one reason for the headroom of [CheckBudget].
// Numbers take at most [NumberBytes] bytes, the longest shortest round-trip
// form of a float64, unless an integer has both minimum and maximum.
type Options struct {
	// ASCIIOnly assumes encoders that escape every non-ASCII character, as
	// Python's json.dumps does by default: a character outside the Basic
	// Multilingual Plane then takes 12 bytes (a surrogate pair of \u
	// escapes). Otherwise a character takes at most 6 bytes (a control
	// character, or <, > and & under Go's HTML escaping, written as \u00XX;
	// any other character is at most 4 bytes of UTF-8).
	ASCIIOnly bool
}

// NumberBytes is the size assumed for a number: len("-1.7976931348623157e+308").
const NumberBytes = 24

const sep = 2 // ", " or ": "

// unbounded marks a size without a ceiling.
const unbounded = math.MaxInt64

// ErrUnbounded is returned, wrapped with the findings, by [WorstCase] for a
// schema that admits input of unbounded size.
var ErrUnbounded = errors.New("schema: input has no ceiling")

// WorstCase returns the largest size in bytes of a JSON instance valid
// against the schema doc, under the assumptions of o. A schema that
// [Audit] finds unbounded is an error wrapping [ErrUnbounded] that lists
// the findings.
func WorstCase(doc []byte, o Options) (int64, error) {
	root, err := parse(doc)
	if err != nil {
		return 0, err
	}
	return worstOf(root, o)
}

func worstOf(root any, o Options) (int64, error) {
	w := &walker{root: root}
	w.node("", root)
	if len(w.findings) > 0 {
		var msgs []string
		for _, f := range w.findings {
			msgs = append(msgs, f.String())
		}
		return 0, fmt.Errorf("%w: %s", ErrUnbounded, strings.Join(msgs, "; "))
	}
	s := &sizer{root: root, o: o}
	n := s.schema(root)
	if n == unbounded {
		return 0, fmt.Errorf("%w: the size has no finite bound", ErrUnbounded)
	}
	return n, nil
}

type sizer struct {
	root any
	o    Options
	refs []string
}

// add adds sizes, saturating at unbounded.
func add(ns ...int64) int64 {
	var t int64
	for _, n := range ns {
		if n == unbounded || t > unbounded-n {
			return unbounded
		}
		t += n
	}
	return t
}

// mul multiplies a count by a size, saturating.
func mul(k, n int64) int64 {
	if k == 0 {
		return 0
	}
	if n == unbounded || n > unbounded/k {
		return unbounded
	}
	return k * n
}

func (s *sizer) perChar() int64 {
	if s.o.ASCIIOnly {
		return 12
	}
	return 6
}

// schema bounds the size of any instance of v: every keyword bounds it, so
// the least bound holds.
func (s *sizer) schema(v any) int64 {
	m, ok := v.(map[string]any)
	if !ok {
		if v == false {
			return 0
		}
		return unbounded
	}
	best := int64(unbounded)
	if ref, ok := m["$ref"].(string); ok {
		best = min(best, s.ref(ref))
	}
	if c, ok := m["const"]; ok {
		best = min(best, s.value(c))
	}
	if e, ok := m["enum"].([]any); ok {
		var most int64
		for _, v := range e {
			most = max(most, s.value(v))
		}
		best = min(best, most)
	}
	if ts := types(m); len(ts) > 0 {
		var most int64
		for _, t := range ts {
			most = max(most, s.typed(t, m))
		}
		best = min(best, most)
	}
	if list, ok := m["allOf"].([]any); ok {
		for _, sub := range list {
			best = min(best, s.schema(sub))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if list, ok := m[k].([]any); ok {
			var most int64
			for _, sub := range list {
				most = max(most, s.schema(sub))
			}
			best = min(best, most)
		}
	}
	return best
}

func (s *sizer) ref(ref string) int64 {
	for _, r := range s.refs {
		if r == ref {
			return unbounded
		}
	}
	target, ok := resolve(s.root, ref)
	if !ok {
		return unbounded
	}
	s.refs = append(s.refs, ref)
	defer func() { s.refs = s.refs[:len(s.refs)-1] }()
	return s.schema(target)
}

func (s *sizer) typed(t string, m map[string]any) int64 {
	switch t {
	case "null":
		return 4
	case "boolean":
		return 5
	case "number":
		return NumberBytes
	case "integer":
		lo, lok := m["minimum"].(json.Number)
		hi, hok := m["maximum"].(json.Number)
		if lok && hok {
			return max(int64(len(lo.String())), int64(len(hi.String())))
		}
		return NumberBytes
	case "string":
		n, ok := count(m["maxLength"])
		if !ok {
			return unbounded
		}
		return add(2, mul(n, s.perChar()))
	case "array":
		return s.array(m)
	case "object":
		return s.object(m)
	}
	return unbounded
}

// count reads a non-negative integer keyword.
func count(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}

func (s *sizer) array(m map[string]any) int64 {
	tuple, closed := tupleOf(m)
	n, ok := count(m["maxItems"])
	if closed {
		if !ok || n > int64(len(tuple)) {
			n = int64(len(tuple))
		}
		ok = true
	}
	if !ok {
		return unbounded
	}
	var rest any = true // items after the tuple
	if it, ok := m["items"]; ok {
		if _, isList := it.([]any); !isList {
			rest = it
		} else if ai, ok := m["additionalItems"]; ok {
			rest = ai
		}
	}
	total := int64(2)
	for i := 0; int64(i) < n && i < len(tuple); i++ {
		total = add(total, s.schema(tuple[i]))
	}
	if extra := n - int64(len(tuple)); extra > 0 {
		total = add(total, mul(extra, s.schema(rest)))
	}
	return add(total, mul(max(n-1, 0), sep))
}

func (s *sizer) object(m map[string]any) int64 {
	props, _ := m["properties"].(map[string]any)
	var members []int64
	var most int64
	for name, sub := range props {
		size := add(s.stringValue(name), sep, s.schema(sub))
		members = append(members, size)
		most = max(most, size)
	}
	addl, hasAddl := m["additionalProperties"]
	closed := hasAddl && addl == false && !has(m, "patternProperties")
	if closed {
		total := int64(2)
		for i, size := range members {
			total = add(total, size)
			if i > 0 {
				total = add(total, sep)
			}
		}
		return total
	}
	k, ok := count(m["maxProperties"])
	if !ok {
		return unbounded
	}
	pn, _ := m["propertyNames"].(map[string]any)
	nameLen, ok := count(pn["maxLength"])
	if !ok {
		return unbounded
	}
	var value int64
	if hasAddl {
		value = s.schema(addl)
	} else {
		value = unbounded
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, sub := range pp {
			value = max(value, s.schema(sub))
		}
	}
	extra := add(2, mul(nameLen, s.perChar()), sep, value)
	most = max(most, extra)
	return add(2, mul(k, most), mul(max(k-1, 0), sep))
}

// value is the size of a concrete JSON value (from const or enum).
func (s *sizer) value(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		if v {
			return 4
		}
		return 5
	case json.Number:
		return int64(len(v.String()))
	case string:
		return s.stringValue(v)
	case []any:
		total := int64(2)
		for i, e := range v {
			total = add(total, s.value(e))
			if i > 0 {
				total = add(total, sep)
			}
		}
		return total
	case map[string]any:
		total := int64(2)
		i := 0
		for k, e := range v {
			total = add(total, s.stringValue(k), sep, s.value(e))
			if i > 0 {
				total = add(total, sep)
			}
			i++
		}
		return total
	}
	return unbounded
}

// stringValue is the largest size of the string literal of str.
func (s *sizer) stringValue(str string) int64 {
	n := int64(2)
	for _, r := range str {
		switch {
		case r == '"' || r == '\\':
			n += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
			n += 6
		case r < utf8.RuneSelf:
			n++
		case s.o.ASCIIOnly && r > 0xffff:
			n += 12
		case s.o.ASCIIOnly:
			n += 6
		default:
			n += int64(utf8.RuneLen(r))
		}
	}
	return n
}
