package schema

import (
	"encoding/json"
	"strconv"
	"strings"
)

// NumberBytes is the size assumed for a number that is not a whole number
// of known range: 25, the longest form Go's encoding/json gives a float64
// (-0.0000012345678901234567; JavaScript writes the same). Python writes
// floats in at most 24 bytes, int64 takes at most 20.
const NumberBytes = 25

// wholeExtra is what a whole number may take beyond its digits: a sign (zero
// may be written -0.0) and ".0" (Python writes a whole float as 5.0).
const wholeExtra = 3

// expDigits is the fewest integer digits of a whole number that Python
// writes in exponent form when it holds it as a float: from 1e16 up, repr
// gives -1.2345678901234568e+16 (23 bytes, more than 17 digits plus
// [wholeExtra]).
const expDigits = 17

// wholeLen bounds how a client writes a whole number of d integer digits:
// its digits plus [wholeExtra], or, from [expDigits] digits up, at least
// [NumberBytes] (a float in exponent form).
func wholeLen(d int64) int64 {
	if d >= expDigits {
		return max(add(d, wholeExtra), NumberBytes)
	}
	return add(d, wholeExtra)
}

// A decimal is a number literal read as 0.digits × 10^point, digits without
// leading or trailing zeros (empty for zero). Reading it allocates nothing
// that grows with the exponent: 1e999999999 is cheap.
type decimal struct {
	neg    bool
	digits string
	point  int64
}

// exponentCap keeps exponents where sums of them cannot overflow.
const exponentCap = 1 << 40

// parseDecimal reads a JSON number literal (as json.Number holds it).
func parseDecimal(lit string) decimal {
	var d decimal
	if strings.HasPrefix(lit, "-") {
		d.neg, lit = true, lit[1:]
	}
	mant, exp, _ := strings.Cut(strings.ToLower(lit), "e")
	var e int64
	if exp != "" {
		var err error
		e, err = strconv.ParseInt(exp, 10, 64)
		if err != nil || e > exponentCap || e < -exponentCap { // out of range: saturate
			e = exponentCap
			if strings.HasPrefix(exp, "-") {
				e = -exponentCap
			}
		}
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	point := int64(len(whole))
	for digits != "" && digits[0] == '0' {
		digits, point = digits[1:], point-1
	}
	digits = strings.TrimRight(digits, "0")
	d.digits, d.point = digits, point+e
	return d
}

// whole reports whether d is a whole number.
func (d decimal) whole() bool { return int64(len(d.digits)) <= d.point || d.digits == "" }

// intDigits is the number of decimal digits of d's integer part (1 for 0).
func (d decimal) intDigits() int64 {
	if d.digits == "" || d.point <= 0 {
		return 1
	}
	return d.point
}

// count reads a non-negative whole number keyword (maxItems, maxLength:
// 3, 3.0 and 3e0 alike); a value above 2^63-1 saturates at unbounded.
func count(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	d := parseDecimal(n.String())
	if !d.whole() || d.neg && d.digits != "" {
		return 0, false
	}
	if d.digits == "" {
		return 0, true
	}
	if d.point > 18 {
		return unbounded, true
	}
	i, err := strconv.ParseInt(d.digits+strings.Repeat("0", int(d.point)-len(d.digits)), 10, 64)
	if err != nil {
		return unbounded, true
	}
	return i, true
}

// numberLen bounds how a client writes the number of the literal lit (a
// const or enum value): a whole number by [wholeLen] (1e9 is sent as
// 1000000000), any other number [NumberBytes], and never less than the
// literal itself.
func numberLen(lit string) int64 {
	d := parseDecimal(lit)
	if d.whole() {
		return max(int64(len(lit)), wholeLen(d.intDigits()))
	}
	return max(int64(len(lit)), NumberBytes)
}

// rangeEnds returns the literals of the lower and upper limits of a
// number schema (minimum, exclusiveMinimum; maximum, exclusiveMaximum).
// The boolean exclusive limits of draft 4 are not read: the inclusive
// limit then bounds as well.
func rangeEnds(s map[string]any) (lo, hi []string) {
	for _, k := range []string{"minimum", "exclusiveMinimum"} {
		if n, ok := s[k].(json.Number); ok {
			lo = append(lo, n.String())
		}
	}
	for _, k := range []string{"maximum", "exclusiveMaximum"} {
		if n, ok := s[k].(json.Number); ok {
			hi = append(hi, n.String())
		}
	}
	return lo, hi
}

// endLen is the longest whole number on one side of a range bounded by
// every literal of ends: [wholeLen] of the digits of the integer part of
// the tightest end. Of two limits on one side the tighter gives the
// shorter integers whenever the range is not empty, so the least is taken.
func endLen(ends []string) int64 {
	n := int64(unbounded)
	for _, e := range ends {
		n = min(n, wholeLen(parseDecimal(e).intDigits()))
	}
	return n
}

// integerBound bounds an integer: with both a lower and an upper limit, by
// the longest whole number in the range (the longest sits at one end),
// otherwise by [NumberBytes]. multipleOf is not read: it only removes
// instances.
func integerBound(s map[string]any) int64 {
	lo, hi := rangeEnds(s)
	if len(lo) == 0 || len(hi) == 0 {
		return NumberBytes
	}
	return max(endLen(lo), endLen(hi))
}

// numberBound bounds a number: [NumberBytes], or more when a range holds
// whole numbers longer than that (a client may send them as integers).
func numberBound(s map[string]any) int64 {
	lo, hi := rangeEnds(s)
	if len(lo) == 0 || len(hi) == 0 {
		return NumberBytes
	}
	return max(NumberBytes, endLen(lo), endLen(hi))
}
