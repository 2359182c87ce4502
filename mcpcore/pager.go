package mcpcore

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Pager pages a list tool's items: a "limit" argument with a small default
// and a hard maximum the server enforces (and declares as "maximum" in the
// tool's input schema, where schema.AuditTool sees it), an opaque "cursor"
// argument, and a closing line that says how many items remain and how to
// ask for the next page. Limits count items. The cursor is opaque to the
// agent but not a secret: it encodes an item offset, so an altered cursor
// only moves the window (or is refused), never widens it. A Pager is a
// value, safe for concurrent use.
type Pager struct {
	// DefaultLimit is the number of items of a page when the call gives no
	// limit. Zero means 20; negative, or above MaxLimit, is a
	// configuration error.
	DefaultLimit int
	// MaxLimit is the most items a call may ask for; a larger limit is
	// refused, not clamped. Zero means 100; negative is a configuration
	// error.
	MaxLimit int
}

// PageArgs are the pagination arguments of a tool call, to embed in the
// tool's input struct.
type PageArgs struct {
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// Page is the window of items [Pager.Page] chose: items[Start:End] of Total.
type Page struct {
	Start, End, Total int
	// Next is the cursor of the following page; empty on the last.
	Next string
}

// maxCursorLen bounds the cursor argument, in bytes: the schema says so, and
// Page refuses longer ones.
const maxCursorLen = 48

func (p Pager) limits() (def, max int, err error) {
	def, max = p.DefaultLimit, p.MaxLimit
	if def == 0 {
		def = 20
	}
	if max == 0 {
		max = 100
	}
	if def < 0 || max < 0 || def > max {
		return 0, 0, fmt.Errorf("mcpbound: Pager{DefaultLimit: %d, MaxLimit: %d}: want 0 <= DefaultLimit <= MaxLimit (zero means 20 and 100)", p.DefaultLimit, p.MaxLimit)
	}
	return def, max, nil
}

// Validate reports whether the pager's configuration is usable.
func (p Pager) Validate() error { _, _, err := p.limits(); return err }

// SchemaProperties returns the JSON Schema of the two arguments, "limit"
// and "cursor", as members to put into a tool input schema's "properties"
// object (without the enclosing braces). It panics if [Pager.Validate]
// reports an error.
func (p Pager) SchemaProperties() string {
	def, max, err := p.limits()
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`"limit": {"type": "integer", "minimum": 1, "maximum": %d, "default": %d, "description": "items per page (at most %d)"},
		"cursor": {"type": "string", "maxLength": %d, "description": "the cursor a previous page named, for the next page"}`,
		max, def, max, maxCursorLen)
}

// Page returns the window of total items that a asks for: from the cursor's
// position (the start without one), at most the limit (DefaultLimit
// without one). A limit above MaxLimit or below zero, a malformed cursor, or
// one past the end is an error to report to the caller.
func (p Pager) Page(total int, a PageArgs) (Page, error) {
	def, max, err := p.limits()
	if err != nil {
		return Page{}, err
	}
	limit := a.Limit
	switch {
	case limit == 0:
		limit = def
	case limit < 0 || limit > max:
		return Page{}, fmt.Errorf("limit %d: must be between 1 and %d", a.Limit, max)
	}
	start := 0
	if a.Cursor != "" {
		if start, err = decodeCursor(a.Cursor); err != nil || start > total {
			return Page{}, fmt.Errorf("invalid cursor: use the one the previous page named, or none for the first page")
		}
	}
	pg := Page{Start: start, End: min(total, start+limit), Total: total}
	if pg.End < total {
		pg.Next = encodeCursor(pg.End)
	}
	return pg, nil
}

// Line is the closing line of a page: which items were shown, how many
// remain, and how to ask for the next page.
func (pg Page) Line() string {
	if pg.End <= pg.Start {
		return fmt.Sprintf("[page: no items here, %d in all; none remain]", pg.Total)
	}
	if pg.Next == "" {
		return fmt.Sprintf("[page: items %d-%d of %d; none remain]", pg.Start+1, pg.End, pg.Total)
	}
	return fmt.Sprintf("[page: items %d-%d of %d; %d remain: call again with cursor %q for the next page]",
		pg.Start+1, pg.End, pg.Total, pg.Total-pg.End, pg.Next)
}

// cursorPrefix marks this package's cursors, so that another cursor
// (from a different tool, say) is refused rather than misread.
const cursorPrefix = "mcpbound1:"

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

func decodeCursor(c string) (int, error) {
	if len(c) > maxCursorLen {
		return 0, fmt.Errorf("cursor too long")
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, err
	}
	s, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return 0, fmt.Errorf("not a cursor of this tool")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		return 0, fmt.Errorf("malformed cursor")
	}
	return n, nil
}
