package limits

import "fmt"

// Defaults applied to zero fields of [JSON].
const (
	DefaultMaxJSONDepth         = 64
	DefaultMaxJSONArrayLen      = 10000
	DefaultMaxJSONStringLen     = 1 << 20
	DefaultMaxJSONObjectMembers = 1000
	DefaultMaxJSONValues        = 1 << 18
	DefaultMaxJSONObjects       = 1 << 16
)

// JSON holds limits on the shape of a JSON document: the constraints a
// parser needs after decompression, which byte counts do not give. A zero
// field means its default; a negative field is invalid; any value up to
// math.MaxInt is accepted and works (the arithmetic saturates).
//
// What the check bounds: the memory a handler's parser allocates for an
// accepted document. A decoded tree costs about a byte per byte of string
// but tens to hundreds of bytes per value, whatever the value's size
// (encoding/json into any, measured: 40-50 bytes per number or array,
// 240-330 per object, a map each), so 4 MiB of short values within every
// per-array and depth limit expanded 20 times on the heap as arrays and 65
// times as nested objects, and a parser that decodes twice (an MCP SDK)
// doubles that. MaxValues and MaxObjects bound the counts: with the
// defaults, encoding/json's tree of any accepted document is at most about
// 40 MiB beyond the document's own size, so a 4 MiB body expands at most
// about 11 times (measured by the JSON check's tests). Not bounded:
// what a handler builds from the tree, and a parser whose per-value cost is
// higher than encoding/json's: scale the two down for it.
type JSON struct {
	// MaxDepth caps the nesting of arrays and objects: a top-level array is
	// at depth 1. Default [DefaultMaxJSONDepth].
	MaxDepth int
	// MaxArrayLen caps the elements of any one array. Default
	// [DefaultMaxJSONArrayLen].
	MaxArrayLen int
	// MaxStringLen caps any one string, values and object keys alike, in
	// bytes as written between the quotes (an escape such as \u00e9 counts
	// its 6 bytes). Default [DefaultMaxJSONStringLen].
	MaxStringLen int
	// MaxObjectMembers caps the members of any one object. Default
	// [DefaultMaxJSONObjectMembers].
	MaxObjectMembers int
	// MaxValues caps the values in the whole document: every number,
	// string, true, false, null, array and object, at any depth (object
	// keys are not values; each member's value is). It is the limit that
	// bounds what a parser allocates, since the per-array, per-object and
	// depth limits multiply. Default [DefaultMaxJSONValues] (262,144).
	MaxValues int
	// MaxObjects caps the objects in the whole document, at any depth: the
	// costliest values to decode (a map each). Default
	// [DefaultMaxJSONObjects] (65,536).
	MaxObjects int
}

// Validate reports the first negative field of j, or nil.
func (j JSON) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxDepth", j.MaxDepth}, {"MaxArrayLen", j.MaxArrayLen}, {"MaxStringLen", j.MaxStringLen}, {"MaxObjectMembers", j.MaxObjectMembers}, {"MaxValues", j.MaxValues}, {"MaxObjects", j.MaxObjects}} {
		if f.v < 0 {
			return fmt.Errorf("limits: JSON.%s is negative (%d)", f.name, f.v)
		}
	}
	return nil
}

// WithDefaults returns j with every zero field replaced by its default.
func (j JSON) WithDefaults() JSON {
	setDefault(&j.MaxDepth, DefaultMaxJSONDepth)
	setDefault(&j.MaxArrayLen, DefaultMaxJSONArrayLen)
	setDefault(&j.MaxStringLen, DefaultMaxJSONStringLen)
	setDefault(&j.MaxObjectMembers, DefaultMaxJSONObjectMembers)
	setDefault(&j.MaxValues, DefaultMaxJSONValues)
	setDefault(&j.MaxObjects, DefaultMaxJSONObjects)
	return j
}
