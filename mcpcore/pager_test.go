package mcpcore

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPager walks a list to its end by the cursors the lines name, and
// refuses a limit one above the maximum. Sabotage: accepting limit
// MaxLimit+1 fails here.
func TestPager(t *testing.T) {
	p := Pager{DefaultLimit: 3, MaxLimit: 5}
	var seen, pages int
	args := PageArgs{}
	for pages < 100 {
		pg, err := p.Page(11, args)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if pg.Start != seen || pg.End-pg.Start > 3 {
			t.Fatalf("page %d: %+v after %d items", pages, pg, seen)
		}
		seen = pg.End
		line := pg.Line()
		if pg.Next == "" {
			if !strings.Contains(line, "none remain") {
				t.Errorf("last line %q", line)
			}
			break
		}
		if want := itoa(11-pg.End) + " remain"; !strings.Contains(line, want) || !strings.Contains(line, pg.Next) {
			t.Errorf("line %q lacks %q or the cursor", line, want)
		}
		args = PageArgs{Cursor: pg.Next}
	}
	if seen != 11 || pages != 4 {
		t.Errorf("saw %d items in %d pages, want 11 in 4", seen, pages)
	}
	if pg, err := p.Page(11, PageArgs{Limit: 5}); err != nil || pg.End != 5 {
		t.Errorf("limit 5 (the maximum): %+v, %v", pg, err)
	}
	for _, bad := range []PageArgs{{Limit: 6}, {Limit: -1}, {Cursor: "bm90IGEgY3Vyc29y"}, {Cursor: encodeCursor(12)}, {Cursor: strings.Repeat("A", 100)}} {
		if _, err := p.Page(11, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	var props map[string]map[string]any
	if err := json.Unmarshal([]byte("{"+p.SchemaProperties()+"}"), &props); err != nil {
		t.Fatal(err)
	}
	if props["limit"]["maximum"] != 5.0 || props["limit"]["default"] != 3.0 || props["cursor"]["maxLength"] == nil {
		t.Errorf("schema properties %v", props)
	}
	if (Pager{DefaultLimit: 6, MaxLimit: 5}).Validate() == nil || (Pager{MaxLimit: -1}).Validate() == nil {
		t.Error("invalid pagers accepted")
	}
}
