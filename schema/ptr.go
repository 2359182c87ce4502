package schema

import "strings"

// A ptr is a place in the schema document, kept as a chain of reference
// tokens so that walking one level deeper costs O(1): the JSON Pointer is
// written out only for a finding. nil is the root.
type ptr struct {
	up  *ptr
	tok string // escaped (~0, ~1)
}

// to returns the place below p reached by the tokens, already escaped.
func (p *ptr) to(toks ...string) *ptr {
	for _, t := range toks {
		p = &ptr{up: p, tok: t}
	}
	return p
}

// String returns the JSON Pointer of p; the root is "/", as [Finding.Path]
// writes it.
func (p *ptr) String() string {
	if p == nil {
		return "/"
	}
	var toks []string
	for q := p; q != nil; q = q.up {
		toks = append(toks, q.tok)
	}
	var b strings.Builder
	for i := len(toks) - 1; i >= 0; i-- {
		b.WriteString("/" + toks[i])
	}
	return b.String()
}
