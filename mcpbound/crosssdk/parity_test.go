package crosssdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/internal/mcptest"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// A parityRow is one behaviour of the caps, run on every pair of a server
// on either SDK and a client on either SDK: the server's ServerLimits
// through its adapter (or none), the client's ClientLimits through its
// adapter.
type parityRow struct {
	name   string
	server *mcpcore.ServerLimits      // the server's caps; nil for none
	store  func() mcpcore.ResultStore // a new store for each server; nil for none
	client mcpcore.ClientLimits       // the client's ceilings (a private SpillDir unless given)
	tool   tool

	// read, if not nil, names the URI read after the call (given the
	// link the call returned) in place of following the link's pages;
	// expire makes the store's results read as expired first.
	read   func(link string) string
	expire bool
	// codes is the JSON-RPC error code of a failed read, per server SDK:
	// a documented difference, mcp-go answering every resource handler's
	// error with -32603, the official SDK's adapter a missing resource
	// with -32602 as the MCP specification says.
	codes map[string]int64

	// What the row pins, the same on all four pairs:
	whole   bool   // the result arrives as the tool made it
	marker  string // the text has a cut marker whose M is the result's characters, and contains this
	max     int    // the text has at most this many characters (0: not checked)
	pages   int    // the link has this many pages, whose data join to the result byte-exact
	saved   bool   // the text names a file holding the result byte-exact
	isError bool
	readErr string // the read fails, its message containing this
}

// parity is what one pair observed of a row.
type parity struct {
	Call  callObs
	Pages []pageObs
	Err   *readErr
}

// TestCapsAlikeOnBothSDKs is the one table of the caps' marker, page and
// spill behaviour, each row run on a server of each SDK (go-sdk with
// mcpbound.ServerLimits, mcp-go with mcpgo.ServerLimits) called by a
// client of each SDK (go-sdk with mcpbound.ClientLimits, mcp-go with
// mcpgo.ClientLimits): the four observations must be identical (the
// marker's text, the link but for its random id, the page count and the
// pages' texts and notes, the saved file's contents and the note naming
// it), except where the adapters are documented to differ, which the
// table states and checks on every row where it shows: a page's result
// _meta (page, pages, next) and its caching hints are set by the official
// SDK's adapter and by mcp-go's never (its resource handlers return
// contents only), and a read that fails is -32602 there and -32603 on
// mcp-go. Each row also pins
// what the behaviour is, so that two adapters wrong alike fail too.
// Sabotage: a marker that differs on one adapter, an mcp-go server that
// keeps nothing in its store, and an mcp-go client that ignores tools'
// own ceilings each failed this test (see the commit).
func TestCapsAlikeOnBothSDKs(t *testing.T) {
	const capChars = 1000
	huge, hugeLinked := 1<<20, 1<<18
	if testing.Short() {
		huge, hugeLinked = 1<<16, 1<<15
	}
	caps := func(l mcpcore.ServerLimits) *mcpcore.ServerLimits { return &l }
	mem := func() mcpcore.ResultStore { return mcpcore.NewStore(0, 0) }
	expiring := func() mcpcore.ResultStore { return &mcptest.ExpiringStore{ResultStore: mcpcore.NewStore(0, 0)} }
	pages := func(max, total int) int {
		per := mcpcore.ServerLimits{MaxResultChars: max}.PageChars(total)
		return (total + per - 1) / per
	}
	typed := tool{items: 100}
	typedChars := utf8.RuneCountInString(typed.full())
	codes := map[string]int64{goSDK: -32602, mcpGo: -32603}
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o700); err != nil || os.Chmod(open, 0o777) != nil {
		t.Fatal("cannot make a folder open to others")
	}
	const again = "call the tool again asking for less"
	rows := []parityRow{
		// The server's cap: exactly the cap passes whole, one character
		// more is cut, the block within the cap.
		{name: "server cap-1", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), tool: tool{text: mixed(capChars - 1)}, whole: true},
		{name: "server cap", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), tool: tool{text: mixed(capChars)}, whole: true},
		{name: "server cap+1", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), tool: tool{text: mixed(capChars + 1)}, marker: again, max: capChars},
		{name: "server huge", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), tool: tool{text: mixed(huge)}, marker: again, max: capChars},
		{name: "server head and tail", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars, TailChars: 200}), tool: tool{text: mixed(5000)},
			marker: "and the last 200)", max: capChars},
		{name: "server typed cut is an error", server: caps(mcpcore.ServerLimits{MaxResultChars: 2000}), tool: typed,
			marker: "the tool succeeded", max: 2000, isError: true},
		{name: "server error cut", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: mem, tool: tool{text: mixed(5000), isError: true},
			marker: "the rest of this error message was cut", max: capChars, isError: true},
		{name: "server handler failure is a capped error result", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: mem, tool: tool{text: mixed(5000), fails: true},
			marker: "the rest of this error message was cut", max: capChars, isError: true},
		{name: "server image passes beside the cut", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), tool: tool{text: mixed(capChars + 1), image: true},
			marker: again, max: capChars},
		// Links and pages.
		{name: "link cap+1", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: mem, tool: tool{text: mixed(capChars + 1)},
			marker: "read it with resources/read", max: capChars, pages: pages(capChars, capChars+1)},
		{name: "link huge", server: caps(mcpcore.ServerLimits{MaxResultChars: 4000}), store: mem, tool: tool{text: mixed(hugeLinked)},
			marker: "read it with resources/read", max: 4000, pages: pages(4000, hugeLinked)},
		{name: "link typed", server: caps(mcpcore.ServerLimits{MaxResultChars: 2000}), store: mem, tool: typed,
			marker: "the tool succeeded", max: 2000, pages: pages(2000, typedChars), isError: true},
		{name: "link too large to keep", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}),
			store: func() mcpcore.ResultStore { return mcpcore.NewStore(2000, 0) }, tool: tool{text: mixed(5000)},
			marker: "too large to keep", max: capChars},
		// Reads that fail: the same message, a documented code.
		{name: "read a link never issued", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: mem, tool: tool{text: mixed(capChars + 1)},
			read: func(string) string { return mcpcore.ResultURIPrefix + strings.Repeat("0", 32) }, codes: codes,
			marker: "read it with resources/read", readErr: "Resource not found: mcpbound: unknown result link"},
		{name: "read an expired link", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: expiring, tool: tool{text: mixed(capChars + 1)},
			read: func(l string) string { return l }, expire: true, codes: codes,
			marker: "read it with resources/read", readErr: "Resource not found: mcpbound: result link expired"},
		{name: "read past the last page", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: mem, tool: tool{text: mixed(capChars + 1)},
			read: func(l string) string { return l + "?page=3" }, codes: codes,
			marker: "read it with resources/read", readErr: "no such page: page 3 of a result that has 2 pages"},
		{name: "read page 1 by name", server: caps(mcpcore.ServerLimits{MaxResultChars: capChars}), store: mem, tool: tool{text: mixed(capChars + 1)},
			read: func(l string) string { return l + "?page=1" }, codes: codes,
			marker: "read it with resources/read", readErr: "malformed page in the link"},
		// The client's ceilings.
		{name: "client cap-1", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: tool{text: mixed(capChars - 1)}, whole: true},
		{name: "client cap", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: tool{text: mixed(capChars)}, whole: true},
		{name: "client cap+1", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: tool{text: mixed(capChars + 1)}, saved: true},
		{name: "client huge", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: tool{text: mixed(huge)}, saved: true},
		{name: "client tokens at the ceiling", client: mcpcore.ClientLimits{MaxTokens: 300}, tool: tool{text: mixed(1200)}, whole: true},
		{name: "client tokens over the ceiling", client: mcpcore.ClientLimits{MaxTokens: 300}, tool: tool{text: mixed(1201)}, saved: true},
		{name: "client tool's own ceiling", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: tool{text: mixed(3000), ownChars: 3000}, whole: true},
		{name: "client tool's own ceiling+1", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: tool{text: mixed(3001), ownChars: 3000}, saved: true},
		{name: "client typed saved", client: mcpcore.ClientLimits{MaxChars: capChars}, tool: typed, saved: true},
		{name: "client error trimmed", tool: tool{text: mixed(20000), isError: true},
			marker: "these are its first and last 5000", max: mcpcore.DefaultMaxErrorChars, isError: true},
		{name: "client image cut to the tokens", client: mcpcore.ClientLimits{MaxTokens: 300}, tool: tool{text: mixed(2000), image: true},
			marker: "the result has images", max: 1200},
		{name: "client folder not private", client: mcpcore.ClientLimits{MaxChars: capChars, SpillDir: open}, tool: tool{text: mixed(2000)},
			marker: "not private", max: capChars},
		{name: "client folder not private, head and tail", client: mcpcore.ClientLimits{MaxChars: capChars, TailChars: 200, SpillDir: open}, tool: tool{text: mixed(2000)},
			marker: "and the last 200)", max: capChars},
		{name: "client over MaxSpillBytes", client: mcpcore.ClientLimits{MaxChars: capChars, MaxSpillBytes: 1000}, tool: tool{text: mixed(capChars + 1)},
			marker: "could not be saved", max: capChars},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			row.tool.name = "t"
			var first parity
			for i, srv := range sdks {
				var store mcpcore.ResultStore
				var l *mcpcore.ServerLimits
				if row.server != nil {
					c := *row.server
					if row.store != nil {
						store = row.store()
						c.Store = store
					}
					l = &c
				}
				url := serve(t, srv, l, row.tool)
				for j, cl := range sdks {
					o := row.observe(t, dial(t, cl, url, row.client), store)
					row.documented(t, srv, cl, &o)
					if i == 0 && j == 0 {
						row.pin(t, o)
						first = o
						continue
					}
					same(t, srv+" server, "+cl+" client", first, o)
				}
			}
		})
	}
}

// observe calls the row's tool through p and reads what the row reads.
func (row parityRow) observe(t *testing.T, p peer, store mcpcore.ResultStore) parity {
	t.Helper()
	o := parity{Call: p.call(t, row.tool.name)}
	if row.read != nil {
		if e, ok := store.(*mcptest.ExpiringStore); ok {
			e.Expired.Store(row.expire)
			defer e.Expired.Store(false)
		}
		_, o.Err = p.read(t, row.read(o.Call.uri))
		return o
	}
	var data strings.Builder
	for uri := o.Call.uri; uri != "" && len(o.Pages) < 1000; {
		page, err := p.read(t, uri)
		if err != nil {
			t.Fatalf("page %d of %s: %+v", len(o.Pages)+1, uri, err)
		}
		data.WriteString(page.data)
		o.Pages = append(o.Pages, page)
		uri = page.next
	}
	if o.Call.uri != "" && data.String() != row.tool.full() {
		t.Errorf("the %d pages of the link join to %d bytes, not the result's %d", len(o.Pages), data.Len(), len(row.tool.full()))
	}
	return o
}

// documented checks what the adapters are documented to do differently,
// per server SDK (and, for the caching hints, per client), and removes it
// from o, so that the rest compares equal.
func (row parityRow) documented(t *testing.T, srv, cl string, o *parity) {
	t.Helper()
	for k := range o.Pages {
		p := &o.Pages[k]
		// The caching hints of a page: the official SDK's adapter sets
		// them (private, stale at once) whatever the protocol version;
		// mcp-go's resource handlers cannot, and mcp-go sends its own
		// (private and 0 unless the server sets WithCacheHints) from
		// protocol version 2026-07-28, which the Go SDK's client speaks
		// with it, and none before, which the mcp-go client here asks for.
		cache := "private 0"
		if srv == mcpGo && cl == mcpGo {
			cache = " absent"
		}
		if p.Cache != cache {
			t.Errorf("%s server, %s client, page %d: caching hints %q, want %q (documented)", srv, cl, k+1, p.Cache, cache)
		}
		p.Cache = ""
		want := ""
		if srv == goSDK {
			m := map[string]any{"page": k + 1, "pages": len(o.Pages)}
			if p.next != "" {
				m["next"] = p.next
			}
			want = norm(asJSON(m), "")
		}
		if p.Meta != want {
			t.Errorf("%s server, page %d: result _meta %s, want %q (documented: set by the official SDK's adapter, never by mcp-go)", srv, k+1, p.Meta, want)
		}
		p.Meta = ""
	}
	if o.Err != nil {
		if want := row.codes[srv]; o.Err.Code != want {
			t.Errorf("%s server: a failed read is code %d, want %d (documented)", srv, o.Err.Code, want)
		}
		o.Err.Code = 0
	}
}

// pin checks what the row says the behaviour is.
func (row parityRow) pin(t *testing.T, o parity) {
	t.Helper()
	full := row.tool.full()
	c := o.Call
	if c.IsError != row.isError {
		t.Errorf("isError %v, want %v", c.IsError, row.isError)
	}
	if row.whole {
		if c.Text != norm(full, "") || c.Link != "" || c.File != "" || (row.tool.items > 0) != (c.Structured != "") {
			t.Errorf("a result within the caps was changed: %q, link %q, structured %v", clip(c.Text), c.Link, c.Structured != "")
		}
		return
	}
	if c.Structured != "" {
		t.Errorf("a result over the caps kept its structured content")
	}
	if row.max > 0 && utf8.RuneCountInString(c.Text) > row.max {
		t.Errorf("%d characters of text, over %d", utf8.RuneCountInString(c.Text), row.max)
	}
	if row.marker != "" {
		if _, m := parseMarker(t, c.Text); m != utf8.RuneCountInString(full) || !strings.Contains(c.Text, row.marker) {
			t.Errorf("marker M %d, want %d, and %q in %q", m, utf8.RuneCountInString(full), row.marker, clip(c.Text))
		}
	}
	if (c.File != "") != row.saved || (row.saved && c.File != full) {
		t.Errorf("saved %v (%d bytes), want %v (%d bytes): %q", c.File != "", len(c.File), row.saved, len(full), clip(c.Text))
	}
	if len(o.Pages) != row.pages {
		t.Errorf("%d pages, want %d", len(o.Pages), row.pages)
	}
	if (o.Err != nil) != (row.readErr != "") || (o.Err != nil && !strings.Contains(o.Err.Message, row.readErr)) {
		t.Errorf("read error %+v, want one saying %q", o.Err, row.readErr)
	}
	if row.tool.image && (len(c.Kinds) == 0 || c.Kinds[len(c.Kinds)-1] != "image:image/png") {
		t.Errorf("the image did not pass: %v", c.Kinds)
	}
}

// same reports where got differs from want, member by member.
func same(t *testing.T, who string, want, got parity) {
	t.Helper()
	var w, g any
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) == string(gb) {
		return
	}
	json.Unmarshal(wb, &w)
	json.Unmarshal(gb, &g)
	diff(t, who, "", w, g)
}

// diff reports each member of JSON values where got differs from want.
func diff(t *testing.T, who, path string, want, got any) {
	t.Helper()
	if a, b := asJSON(want), asJSON(got); a == b {
		return
	}
	wm, ok1 := want.(map[string]any)
	gm, ok2 := got.(map[string]any)
	if ok1 && ok2 {
		for k := range wm {
			diff(t, who, path+"."+k, wm[k], gm[k])
		}
		return
	}
	wl, ok1 := want.([]any)
	gl, ok2 := got.([]any)
	if ok1 && ok2 && len(wl) == len(gl) {
		for i := range wl {
			diff(t, who, path+"["+strconv.Itoa(i)+"]", wl[i], gl[i])
		}
		return
	}
	t.Errorf("%s: %s differs from the go-sdk pair's:\n got %s\nwant %s", who, path, clip(asJSON(got)), clip(asJSON(want)))
}
