package boundhttp

import (
	"encoding/base64"
	"errors"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/limits"
)

// BodyChars returns the characters the body takes in r's JSON: the
// characters of Body's JSON string as encoding/json's Marshal writes it,
// without the quotes (an escape such as \u0000, \u2028 or \u003c counts
// its 6 characters, \n its 2), or the characters of BodyBase64. It is the
// unit in which [Fetch], [Preview] and [ResultOf] hold a body to
// Budget.MaxDecodedRunes, and what an agent's context is charged for the
// body. An encoder that does not escape HTML (<, >, &) writes fewer.
func (r *Result) BodyChars() int64 {
	if r.BodyBase64 != "" {
		return int64(len(r.BodyBase64))
	}
	return jsonChars(r.Body)
}

// bodyChars returns what BodyChars would return once data is set as a
// Result's body, without encoding it.
func bodyChars(data []byte) int64 {
	if !utf8.Valid(data) {
		return int64(base64.StdEncoding.EncodedLen(len(data)))
	}
	return jsonChars(string(data))
}

// jsonChars returns the characters of s (valid UTF-8) as a JSON string
// written by encoding/json's Marshal, without the quotes.
func jsonChars(s string) int64 {
	var n int64
	for _, c := range s {
		switch {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\u2028' || c == '\u2029':
			n += 6
		default:
			n++
		}
	}
	return n
}

// errSerialisedChars is the cause of a body whose characters were within
// Budget.MaxDecodedRunes but whose serialised form is not.
var errSerialisedChars = errors.New("boundhttp: the body as a Result serialises it (JSON escapes, or base64 for a body that is not UTF-8) is over the character cap")

// charsRejected returns the rejection of a body of n serialised
// characters over limit.
func charsRejected(n, limit int64) *limits.Error {
	return &limits.Error{Stage: limits.StageRunes, Limit: limit, Observed: n, Err: errSerialisedChars}
}
