package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/internal/sat"
)

// Options states the assumptions behind [WorstCase] about how a client
// serialises an instance.
//
// Separators are counted as ", " and ": " (2 bytes each, Python's default;
// compact encoders use 1), with no other whitespace: pretty-printed requests
// are not covered, which is one reason for the headroom of [CheckBudget].
//
// Numbers: a whole number is counted as its decimal digits plus 3 bytes (a
// sign, and ".0" as Python writes a whole float), so an integer schema with
// minimum 0 and maximum 1e9 allows 13 bytes (1000000000.0 and a sign). An
// integer without both a lower and an upper limit, and any number that need
// not be whole, takes [NumberBytes]: clients are assumed to hold numbers as
// float64 or int64 (Go, JavaScript, and Python floats do; a Python int
// beyond 25 digits, or a decimal type that keeps every digit, is not
// covered). A whole number of 17 digits or more takes at least
// [NumberBytes]: Python writes a float from 1e16 up in exponent form
// (-1.2345678901234568e+16), longer than its digits plus 3. multipleOf is
// not read.
//
// Strings: maxLength counts characters (code points), each taking at most
// 12 bytes: a character outside the Basic Multilingual Plane written as a
// surrogate pair of \u escapes (\ud83d\ude00), as Python's json.dumps
// does by default. The Python MCP SDK posts with httpx's json=, and httpx
// before 0.28 serialises with those defaults (ensure_ascii), so the default
// covers a client that escapes every character outside space to tilde:
// any other non-ASCII character, DEL (U+007F), a control character, and
// <, > and & under Go's HTML escaping take 6 bytes; a quote or backslash 2.
// Strings given in the schema (property names, const and enum values) are
// counted exactly, by the longest form an encoder in use gives each
// character; U+FFFD counts 6 bytes, since Go reads a lone surrogate escape
// (\ud800, which JavaScript and Python keep and write back as such) as
// U+FFFD.
//
// Bounds never read pattern, format, contentEncoding, not, if/then/else or
// dependent schemas: those only remove instances, so ignoring them only
// makes a bound larger, never smaller.
//
// The zero Options is the safe choice for a server that does not know its
// clients.
type Options struct {
	// UTF8 assumes clients that write non-ASCII characters as UTF-8, as
	// Go's encoding/json, JavaScript's JSON.stringify (the MCP Go and
	// TypeScript SDKs) and httpx from 0.28 do: a character of a string
	// then takes at most 6 bytes (a control character, or <, > and &
	// under Go's HTML escaping, as \uXXXX; at most 4 bytes of UTF-8
	// otherwise), half the default. Set it only when no client escapes
	// non-ASCII: a Python MCP client on httpx before 0.28 sends 12 bytes
	// for a character outside the Basic Multilingual Plane, so a budget
	// checked under UTF8 can refuse its largest request. Whether a schema
	// has a bound at all does not depend on it: one whose largest instance
	// under the default passes 2^63 bytes has none under UTF8 either.
	UTF8 bool
}

const sep = 2 // ", " or ": "

// unbounded marks a size without a ceiling.
const unbounded = math.MaxInt64

// ErrUnbounded is returned, wrapped with the findings, by [WorstCase] for a
// schema that admits input of unbounded size.
var ErrUnbounded = errors.New("schema: input has no ceiling")

// WorstCase returns the largest size in bytes of a JSON instance valid
// against the schema doc, under the assumptions of o. It never states less
// than the largest valid instance as such a client writes it. A schema
// that [Audit] finds unbounded (and no other) is an error wrapping
// [ErrUnbounded] that lists the findings. Time is linear in the size of doc.
func WorstCase(doc []byte, o Options) (int64, error) {
	root, err := parse(doc)
	if err != nil {
		return 0, err
	}
	return worstOf(root, o)
}

func worstOf(root any, o Options) (int64, error) {
	n, findings := walk(root, o)
	if n == unbounded {
		return 0, unboundedError(findings)
	}
	return n, nil
}

// maxListed is the most findings an error lists by message.
const maxListed = 8

// unboundedError wraps [ErrUnbounded] with the first findings.
func unboundedError(findings []Finding) error {
	var msgs []string
	for i, f := range findings {
		if i == maxListed {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(findings)-maxListed))
			break
		}
		msgs = append(msgs, f.String())
	}
	return fmt.Errorf("%w: %s", ErrUnbounded, strings.Join(msgs, "; "))
}

// add adds sizes, saturating at unbounded (math.MaxInt64).
func add(ns ...int64) int64 {
	var t int64
	for _, n := range ns {
		t = sat.Add(t, n)
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

// perChar is the most bytes one character of a string takes.
func (w *walker) perChar() int64 {
	if w.o.UTF8 {
		return 6
	}
	return 12
}

// value is the size of a concrete JSON value (from const or enum).
func (w *walker) value(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		if v {
			return 4
		}
		return 5
	case json.Number:
		return numberLen(v.String())
	case string:
		return w.stringValue(v)
	case []any:
		total := int64(2)
		for i, e := range v {
			total = add(total, w.value(e))
			if i > 0 {
				total = add(total, sep)
			}
		}
		return total
	case map[string]any:
		total := int64(2)
		i := 0
		for k, e := range v {
			total = add(total, w.stringValue(k), sep, w.value(e))
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
func (w *walker) stringValue(str string) int64 {
	n := int64(2)
	for _, r := range str {
		switch {
		case r == '"' || r == '\\':
			n += 2
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
			n += 6
		case !w.o.UTF8 && r == 0x7f: // outside space to tilde: \u007f
			n += 6
		case r < utf8.RuneSelf:
			n++
		case r == utf8.RuneError: // may stand for a lone surrogate: \ud800
			n += 6
		case !w.o.UTF8 && r > 0xffff: // a surrogate pair: \ud83d\ude00
			n += 12
		case !w.o.UTF8:
			n += 6
		default:
			n += int64(utf8.RuneLen(r))
		}
	}
	return n
}
