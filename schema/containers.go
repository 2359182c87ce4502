package schema

import (
	"maps"
	"slices"
	"strconv"
)

// str bounds a string by maxLength, in characters (code points, as JSON
// Schema counts them), each written in at most [Options] perChar bytes.
func (w *walker) str(at *ptr, s map[string]any) *bound {
	v, ok := s["maxLength"]
	if !ok {
		return open(at, KindString, "string without maxLength")
	}
	n, ok := count(v)
	if !ok {
		return open(at, KindString, "maxLength is not a non-negative integer")
	}
	return fixed(add(2, mul(n, w.perChar())))
}

// array bounds an array: at most maxItems items (or the length of a closed
// tuple), the positional ones by their schemas, the rest by items. In a
// dialect before 2020-12 prefixItems is not a keyword; in 2020-12 (a
// document without $schema included) an array of items and additionalItems
// are not, and the MCP Go SDK's validator skips them, so that every item
// may be any value. Either way the bound is the larger of the readings with
// and without the keyword, safe whichever a validator takes.
func (w *walker) array(at *ptr, s map[string]any) *bound {
	b := w.arrayAs(at, s, true, true)
	if w.noPrefix && has(s, "prefixItems") {
		return most([]*bound{b, w.arrayAs(at, s, false, true)})
	}
	if _, ok := s["items"].([]any); ok && !w.noPrefix {
		return most([]*bound{b, w.arrayAs(at, s, true, false)})
	}
	return b
}

// arrayAs bounds an array reading prefixItems only when prefix, and an
// array of items as positional schemas only when itemsArray.
func (w *walker) arrayAs(at *ptr, s map[string]any, prefix, itemsArray bool) *bound {
	tuple, key, closed := tupleOf(s, prefix, itemsArray)
	limit := int64(-1)
	if v, ok := s["maxItems"]; ok {
		n, ok := count(v)
		if !ok && !closed {
			return w.unboundedArray(at, s, tuple, key, "maxItems is not a non-negative integer")
		}
		if ok {
			limit = n
		}
	}
	if closed && (limit < 0 || limit > int64(len(tuple))) {
		limit = int64(len(tuple))
	}
	if limit < 0 {
		return w.unboundedArray(at, s, tuple, key, "array without maxItems")
	}
	out := fixed(2)
	for i := 0; i < len(tuple) && int64(i) < limit; i++ {
		out.plus(w.node(at.to(key, strconv.Itoa(i)), tuple[i]), 1)
	}
	if extra := limit - int64(len(tuple)); extra > 0 {
		out.plus(w.rest(at, s, key, extra), extra)
	}
	out.n = add(out.n, mul(max(limit-1, 0), sep))
	return out
}

// unboundedArray is the bound of an array without a ceiling on its items:
// a finding with the message, and, as its parts, the item schemas, so that
// a place without a ceiling inside them is reported in the same pass
// rather than after maxItems is added.
func (w *walker) unboundedArray(at *ptr, s map[string]any, tuple []any, key, message string) *bound {
	out := open(at, KindArray, "%s", message)
	for i, item := range tuple {
		out.plus(w.node(at.to(key, strconv.Itoa(i)), item), 1)
	}
	out.plus(w.rest(at, s, key, -1), 1)
	return out
}

// tupleOf returns the positional item schemas (prefixItems, or an items
// array in drafts before 2020-12), the keyword that holds them, and
// whether no item may follow them. prefixItems is read only when prefix,
// an items array only when itemsArray.
func tupleOf(s map[string]any, prefix, itemsArray bool) ([]any, string, bool) {
	if p, ok := s["prefixItems"].([]any); ok && prefix {
		return p, "prefixItems", s["items"] == false
	}
	if p, ok := s["items"].([]any); ok && itemsArray {
		return p, "items", s["additionalItems"] == false
	}
	return nil, "prefixItems", false
}

// rest bounds each of the extra items that may follow the tuple: extra of
// them, or any number when extra is negative.
func (w *walker) rest(at *ptr, s map[string]any, key string, extra int64) *bound {
	kw := "items"
	if key == "items" {
		kw = "additionalItems"
	}
	v, ok := s[kw]
	switch {
	case !ok && extra < 0:
		return open(at, KindAny, "%s is absent: every item (after any positional ones) may be any value", kw)
	case !ok:
		return open(at, KindAny, "%s is absent: %d items (after any positional ones) may be any value", kw, extra)
	}
	if _, ok := v.([]any); ok && kw == "items" { // a reading that takes no items array
		return open(at.to(kw), KindInvalid, "items is an array, which draft 2020-12 (the dialect of a schema without $schema) does not read: "+
			"every item may be any value; write prefixItems and items: false, or name draft-07 in $schema")
	}
	return w.node(at.to(kw), v)
}

// object bounds an object: a closed one by its properties, all present; an
// open one by maxProperties members of the largest kind.
func (w *walker) object(at *ptr, s map[string]any) *bound {
	props, _ := s["properties"].(map[string]any)
	out := fixed(2)
	var members []*bound
	for i, name := range slices.Sorted(maps.Keys(props)) {
		m := fixed(add(w.stringValue(name), sep))
		m.plus(w.node(at.to("properties", escapeToken(name)), props[name]), 1)
		members = append(members, m)
		if i > 0 {
			out.n = add(out.n, sep)
		}
	}
	addl, hasAddl := s["additionalProperties"]
	if hasAddl && addl == false && !has(s, "patternProperties") {
		for _, m := range members {
			out.plus(m, 1)
		}
		return out
	}
	// Other members: any name matching patternProperties, or any name at
	// all unless additionalProperties is false.
	var values []*bound
	pp, _ := s["patternProperties"].(map[string]any)
	for _, p := range slices.Sorted(maps.Keys(pp)) {
		values = append(values, w.node(at.to("patternProperties", escapeToken(p)), pp[p]))
	}
	k, hasMax := count(s["maxProperties"])
	if hasMax && k == 0 {
		return fixed(2) // {}
	}
	switch {
	case !hasAddl && hasMax:
		values = append(values, open(at.to("additionalProperties"), KindAny, "additional members of any value (additionalProperties is absent)"))
	case addl == true && hasMax:
		values = append(values, open(at.to("additionalProperties"), KindAny, "additional members of any value"))
	case hasAddl && addl != false && addl != true:
		values = append(values, w.node(at.to("additionalProperties"), addl))
	}
	pn, _ := s["propertyNames"].(map[string]any)
	nameLen, named := count(pn["maxLength"])
	if !hasMax { // the finding says what to do; any-value members are not listed too
		advice := "maxProperties" // with it, member names need a ceiling too: one pass names both
		if !named {
			advice = "maxProperties and propertyNames.maxLength"
		}
		out = open(at, KindObject, "object open to any number of members: set additionalProperties to false, or %s", advice)
		out.kids = append(append(out.kids, members...), values...)
		return out
	}
	if !named {
		out = open(at, KindObject, "object with maxProperties but no propertyNames.maxLength: member names have no ceiling")
		out.kids = append(append(out.kids, members...), values...)
		return out
	}
	other := fixed(add(2, mul(nameLen, w.perChar()), sep))
	other.plus(most(values), 1)
	largest := most(append(members, other))
	out.plus(largest, k)
	out.n = add(out.n, mul(max(k-1, 0), sep))
	return out
}
