package decoder

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/boundhttp/boundhttp/limits"
)

// CheckJSON reads r to the end and reports whether it is one well-formed
// JSON document within the shape limits l. A breach is a [*limits.Error]
// of stage [limits.StageJSON] naming the limit (Field) and where it tripped
// (Pointer); a syntax error is one of stage [limits.StageIntegrity] with
// Field "syntax". No error text carries body content: syntax errors give
// the byte offset and the class of the offending byte ("a letter", "a
// control byte"), never the byte, and the pointer, whose keys the document
// chose, reaches text only through [limits.EchoPointer]. It streams: memory is bounded by l.MaxDepth and the
// object keys on the current path, not by the document's size. Errors of r
// pass through; if r returns no bytes and no error 100 times in a row,
// CheckJSON gives up with io.ErrNoProgress, and one that returns a count
// outside [0, len(p)] is an error too.
func CheckJSON(r io.Reader, l limits.JSON) error {
	c, err := NewJSONChecker(l)
	if err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for empty := 0; ; {
		n, rerr := r.Read(buf)
		if n < 0 || n > len(buf) {
			return errSourceCount
		}
		if n == 0 && rerr == nil {
			// A source may not return (0, nil) forever; give up as bufio
			// does.
			if empty++; empty >= maxEmptyReads {
				return io.ErrNoProgress
			}
			continue
		}
		empty = 0
		if _, err := c.Write(buf[:n]); err != nil {
			return err
		}
		if rerr == io.EOF {
			return c.Close()
		}
		if rerr != nil {
			return rerr
		}
	}
}

// A JSONChecker checks a JSON document fed to it in pieces through Write;
// Close reports whether the document ended well. The first error is
// sticky. It is not safe for concurrent use.
type JSONChecker struct {
	l       limits.JSON
	stack   []jsonFrame
	state   jsonState
	strLen  int
	inKey   bool
	lit     string // the rest of a literal being matched
	top     bool   // a top-level value was completed
	off     int64  // bytes consumed
	values  int    // values started, at any depth
	objects int    // objects started, at any depth
	err     error
}

type jsonFrame struct {
	object bool
	n      int    // elements or members so far
	key    []byte // the current member's key, as written
}

type jsonState uint8

const (
	jValue       jsonState = iota // a value must start
	jArrayStart                   // after '[': a value or ']'
	jObjectStart                  // after '{': a key or '}'
	jKey                          // after ',' in an object: a key
	jColon                        // after a key
	jAfter                        // after a value: ',' or a closing bracket, or the end
	jString                       // inside a string
	jEscape                       // after a backslash
	jHex1                         // \u and 4 hex digits left
	jHex2
	jHex3
	jHex4
	jLiteral // inside true, false or null
	jMinus   // number: after '-'
	jZero    // number: a leading 0
	jInt     // number: integer digits
	jDot     // number: after '.'
	jFrac    // number: fraction digits
	jExp     // number: after 'e'
	jExpSign // number: after the exponent's sign
	jExpDig  // number: exponent digits
)

// NewJSONChecker returns a checker for l, or an error if l is invalid.
func NewJSONChecker(l limits.JSON) (*JSONChecker, error) {
	c := new(JSONChecker)
	if err := c.Reset(l); err != nil {
		return nil, err
	}
	return c, nil
}

// Reset makes c a new checker for l, reusing its memory, or returns an
// error if l is invalid.
func (c *JSONChecker) Reset(l limits.JSON) error {
	if err := l.Validate(); err != nil {
		return err
	}
	stack := c.stack[:0]
	*c = JSONChecker{l: l.WithDefaults(), stack: stack}
	return nil
}

var errJSONSyntax = errors.New("decoding: json syntax")

func (c *JSONChecker) syntax(format string, args ...any) error {
	c.err = &limits.Error{Stage: limits.StageIntegrity, Encoding: "json", Field: "syntax",
		Observed: c.off, Pointer: c.pointer(),
		Err: fmt.Errorf("%w: %s at byte %d", errJSONSyntax, fmt.Sprintf(format, args...), c.off)}
	return c.err
}

func (c *JSONChecker) breach(field string, limit, observed int) error {
	c.err = &limits.Error{Stage: limits.StageJSON, Field: field, Limit: int64(limit),
		Observed: int64(observed), Pointer: c.pointer()}
	return c.err
}

// pointer returns the JSON Pointer of the current position.
func (c *JSONChecker) pointer() string {
	var b strings.Builder
	for _, f := range c.stack {
		if f.n == 0 {
			break
		}
		b.WriteByte('/')
		if f.object {
			k := strings.ReplaceAll(string(f.key), "~", "~0")
			b.WriteString(strings.ReplaceAll(k, "/", "~1"))
		} else {
			b.WriteString(strconv.Itoa(f.n - 1))
		}
	}
	return b.String()
}

func (c *JSONChecker) push(object bool) error {
	if len(c.stack) >= c.l.MaxDepth {
		return c.breach("MaxDepth", c.l.MaxDepth, len(c.stack)+1)
	}
	if len(c.stack) < cap(c.stack) {
		c.stack = c.stack[:len(c.stack)+1]
		f := &c.stack[len(c.stack)-1]
		f.object, f.n, f.key = object, 0, f.key[:0]
	} else {
		c.stack = append(c.stack, jsonFrame{object: object})
	}
	return nil
}

// endValue moves on after a complete value.
func (c *JSONChecker) endValue() {
	if len(c.stack) == 0 {
		c.top = true
	}
	c.state = jAfter
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// Write feeds the next bytes of the document. It returns len(p) and nil, or
// the first breach or syntax error.
func (c *JSONChecker) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for i := 0; i < len(p); {
		b := p[i]
		switch c.state {
		case jString:
			// The hot loop: run to the next quote, backslash or control byte.
			start := i
			for i < len(p) && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20 {
				i++
			}
			c.off += int64(i - start)
			if err := c.stringBytes(p[start:i]); err != nil {
				return 0, err
			}
			if i == len(p) {
				continue
			}
			b = p[i]
			switch {
			case b == '"':
				if c.inKey {
					c.state = jColon
					// Checked here, so the pointer names the member's key.
					if f := &c.stack[len(c.stack)-1]; f.n > c.l.MaxObjectMembers {
						return 0, c.breach("MaxObjectMembers", c.l.MaxObjectMembers, f.n)
					}
				} else {
					c.endValue()
				}
			case b == '\\':
				c.state = jEscape
				if err := c.stringBytes(p[i : i+1]); err != nil {
					return 0, err
				}
			default:
				return 0, c.syntax("a control byte in a string")
			}
			i++
			c.off++
			continue
		case jEscape:
			switch b {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.state = jString
			case 'u':
				c.state = jHex1
			default:
				return 0, c.syntax("invalid escape: backslash followed by %s", byteClass(b))
			}
			if err := c.stringBytes(p[i : i+1]); err != nil {
				return 0, err
			}
		case jHex1, jHex2, jHex3, jHex4:
			if !isHex(b) {
				return 0, c.syntax("invalid \\u escape")
			}
			if c.state == jHex4 {
				c.state = jString
			} else {
				c.state++
			}
			if err := c.stringBytes(p[i : i+1]); err != nil {
				return 0, err
			}
		case jValue, jArrayStart:
			if isSpace(b) {
				break
			}
			if c.state == jArrayStart && b == ']' {
				c.stack = c.stack[:len(c.stack)-1]
				c.endValue()
				break
			}
			if c.top {
				return 0, c.syntax("data after the top-level value")
			}
			if n := len(c.stack); n > 0 && !c.stack[n-1].object {
				f := &c.stack[n-1]
				f.n++
				if f.n > c.l.MaxArrayLen {
					return 0, c.breach("MaxArrayLen", c.l.MaxArrayLen, f.n)
				}
			}
			if err := c.startValue(b); err != nil {
				return 0, err
			}
		case jObjectStart, jKey:
			if isSpace(b) {
				break
			}
			if c.state == jObjectStart && b == '}' {
				c.stack = c.stack[:len(c.stack)-1]
				c.endValue()
				break
			}
			if b != '"' {
				return 0, c.syntax("expected an object key, found %s", byteClass(b))
			}
			f := &c.stack[len(c.stack)-1]
			f.n++
			f.key = f.key[:0]
			c.state, c.inKey, c.strLen = jString, true, 0
		case jColon:
			if isSpace(b) {
				break
			}
			if b != ':' {
				return 0, c.syntax("expected ':', found %s", byteClass(b))
			}
			c.state, c.inKey = jValue, false
		case jAfter:
			if isSpace(b) {
				break
			}
			n := len(c.stack)
			if n == 0 {
				return 0, c.syntax("data after the top-level value")
			}
			f := &c.stack[n-1]
			switch {
			case b == ',' && f.object:
				c.state = jKey
			case b == ',':
				c.state = jValue
			case b == '}' && f.object, b == ']' && !f.object:
				c.stack = c.stack[:n-1]
				c.endValue()
			default:
				return 0, c.syntax("expected ',' or a closing bracket, found %s", byteClass(b))
			}
		case jLiteral:
			if b != c.lit[0] {
				return 0, c.syntax("invalid literal")
			}
			if c.lit = c.lit[1:]; c.lit == "" {
				c.endValue()
			}
		default: // numbers
			next, ok, end := numberStep(c.state, b)
			if end {
				c.endValue()
				continue // the byte after the number is read again
			}
			if !ok {
				return 0, c.syntax("invalid number")
			}
			c.state = next
		}
		i++
		c.off++
	}
	return len(p), nil
}

// stringBytes charges the bytes of a string (or key) as written.
func (c *JSONChecker) stringBytes(p []byte) error {
	c.strLen += len(p)
	if c.inKey {
		f := &c.stack[len(c.stack)-1]
		// Keep at most MaxStringLen+1 bytes of a key, written so that it
		// cannot wrap at math.MaxInt: len(f.key) <= MaxStringLen+1.
		if room := c.l.MaxStringLen - len(f.key); len(p) > room {
			p = p[:room+1]
		}
		f.key = append(f.key, p...)
	}
	if c.strLen > c.l.MaxStringLen {
		return c.breach("MaxStringLen", c.l.MaxStringLen, min(c.strLen, c.l.MaxStringLen+1))
	}
	return nil
}

// startValue begins the value whose first byte is b.
func (c *JSONChecker) startValue(b byte) error {
	if c.values++; c.values > c.l.MaxValues {
		return c.breach("MaxValues", c.l.MaxValues, c.values)
	}
	switch {
	case b == '{':
		if c.objects++; c.objects > c.l.MaxObjects {
			return c.breach("MaxObjects", c.l.MaxObjects, c.objects)
		}
		c.state = jObjectStart
		return c.push(true)
	case b == '[':
		c.state = jArrayStart
		return c.push(false)
	case b == '"':
		c.state, c.inKey, c.strLen = jString, false, 0
	case b == '-':
		c.state = jMinus
	case b == '0':
		c.state = jZero
	case b >= '1' && b <= '9':
		c.state = jInt
	case b == 't':
		c.state, c.lit = jLiteral, "rue"
	case b == 'f':
		c.state, c.lit = jLiteral, "alse"
	case b == 'n':
		c.state, c.lit = jLiteral, "ull"
	default:
		return c.syntax("unexpected %s", byteClass(b))
	}
	return nil
}

// numberStep advances the number grammar by one byte. end reports that b is
// not part of the number and the number so far is complete.
func numberStep(s jsonState, b byte) (next jsonState, ok, end bool) {
	digit := b >= '0' && b <= '9'
	switch s {
	case jMinus:
		if b == '0' {
			return jZero, true, false
		}
		if digit {
			return jInt, true, false
		}
	case jZero, jInt:
		switch {
		case digit && s == jInt:
			return jInt, true, false
		case b == '.':
			return jDot, true, false
		case b == 'e' || b == 'E':
			return jExp, true, false
		case digit: // a leading zero followed by a digit
			return s, false, false
		}
		return s, true, true
	case jDot:
		if digit {
			return jFrac, true, false
		}
	case jFrac:
		switch {
		case digit:
			return jFrac, true, false
		case b == 'e' || b == 'E':
			return jExp, true, false
		}
		return s, true, true
	case jExp:
		if b == '+' || b == '-' {
			return jExpSign, true, false
		}
		if digit {
			return jExpDig, true, false
		}
	case jExpSign:
		if digit {
			return jExpDig, true, false
		}
	case jExpDig:
		if digit {
			return jExpDig, true, false
		}
		return s, true, true
	}
	return s, false, false
}

// byteClass describes b for a syntax error without quoting body content:
// the JSON punctuation itself, or the class of any other byte.
func byteClass(b byte) string {
	switch b {
	case '{':
		return "'{'"
	case '}':
		return "'}'"
	case '[':
		return "'['"
	case ']':
		return "']'"
	case ':':
		return "':'"
	case ',':
		return "','"
	case '"':
		return "a quote"
	}
	switch {
	case b < 0x20 || b == 0x7f:
		return "a control byte"
	case b >= 0x80:
		return "a non-ASCII byte"
	case b >= '0' && b <= '9':
		return "a digit"
	case b|0x20 >= 'a' && b|0x20 <= 'z':
		return "a letter"
	}
	return "another ASCII symbol"
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// Close reports whether the bytes written form exactly one complete
// document.
func (c *JSONChecker) Close() error {
	if c.err != nil {
		return c.err
	}
	switch c.state {
	case jZero, jInt, jFrac, jExpDig:
		c.endValue() // a number at the very end
	}
	if !c.top || c.state != jAfter || len(c.stack) != 0 {
		return c.syntax("unexpected end of document")
	}
	return nil
}
