package limits

import "fmt"

// Defaults applied to zero fields of [JSON].
const (
	DefaultMaxJSONDepth         = 64
	DefaultMaxJSONArrayLen      = 10000
	DefaultMaxJSONStringLen     = 1 << 20
	DefaultMaxJSONObjectMembers = 1000
)

// JSON holds limits on the shape of a JSON document: the constraints a
// parser needs after decompression, which byte counts do not give. A zero
// field means its default; a negative field is invalid; any value up to
// math.MaxInt is accepted and works (the arithmetic saturates).
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
}

// Validate reports the first negative field of j, or nil.
func (j JSON) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"MaxDepth", j.MaxDepth}, {"MaxArrayLen", j.MaxArrayLen}, {"MaxStringLen", j.MaxStringLen}, {"MaxObjectMembers", j.MaxObjectMembers}} {
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
	return j
}
