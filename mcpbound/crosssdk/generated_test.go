package crosssdk

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/mcpcore"
)

var (
	mcpSeed  = flag.Uint64("mcp.seed", 1, "the seed of the generated MCP exchanges")
	mcpCases = flag.Int("mcp.cases", 0, "how many generated MCP exchanges (0: the fixed sample)")
)

// An mcpCase is one generated tools/call: a server of either SDK, capped
// or not, with or without a store and a tail; a client of either SDK with
// default or tight ceilings; a tool of one kind and size.
type mcpCase struct {
	server, client string
	cap            int // 0: no ServerLimits
	store, tail    bool
	clientChars    int // 0: the defaults
	kind           string
	size           int
}

func (c mcpCase) String() string {
	return fmt.Sprintf("%s server cap=%d store=%v tail=%v, %s client chars=%d, %s tool of %d", c.server, c.cap, c.store, c.tail,
		c.client, c.clientChars, c.kind, c.size)
}

// generateMCP returns case i of the sample of seed. Sizes are around the
// caps a case has (each cap -1, itself, +1) and far above them.
func generateMCP(seed uint64, i int) mcpCase {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	c := mcpCase{
		server: sdks[r.IntN(2)], client: sdks[r.IntN(2)],
		cap:   []int{0, 1000, 4000}[r.IntN(3)],
		store: r.IntN(2) == 0, tail: r.IntN(3) == 0,
		clientChars: []int{0, 1000, 3000}[r.IntN(3)],
		kind:        []string{"text", "error", "fails", "image"}[r.IntN(4)],
	}
	var around []int
	for _, v := range []int{c.cap, c.clientChars} {
		if v > 0 {
			around = append(around, v-1, v, v+1)
		}
	}
	around = append(around, 10, 20000, mcpcore.DefaultMaxErrorChars+1, 60000)
	c.size = around[r.IntN(len(around))]
	return c
}

// TestMCPAnswersKeepThePromises generates tools/call exchanges over the
// dimensions above and checks, on each, what reaches the model: text within
// every cap that applies, marked when cut (the marker's M the tool's
// characters), a saved file or a link holding the whole result byte-exact,
// a tool's failure as an isError result capped like any, or as an error
// trimmed to MaxErrorChars when no server cap made it a result; a result
// within every cap arrives whole.
func TestMCPAnswersKeepThePromises(t *testing.T) {
	n := 120
	if *mcpCases > 0 {
		n = *mcpCases
	} else if testing.Short() {
		n = 40
	}
	seen := map[string]int{}
	for i := range n {
		c := generateMCP(*mcpSeed, i)
		branch, bad := runMCP(t, c)
		seen[branch]++
		if len(bad) > 0 {
			t.Errorf("case %d of seed %d: %v\n\t%s", i, *mcpSeed, c, strings.Join(bad, "\n\t"))
		}
	}
	for _, b := range []string{"protocol error", "server cut", "error trimmed", "saved", "image", "whole"} {
		if seen[b] == 0 && n >= 100 {
			t.Errorf("no case of %d reached %q: the sample proves nothing of it", n, b)
		}
	}
	t.Logf("%d cases, seed %d: %v", n, *mcpSeed, seen)
}

// runMCP runs case c and returns which oracle applied and its verdicts.
func runMCP(t *testing.T, c mcpCase) (branch string, bad []string) {
	fail := func(f string, a ...any) { bad = append(bad, fmt.Sprintf(f, a...)) }
	tl := tool{name: "t", text: mixed(c.size), isError: c.kind == "error", fails: c.kind == "fails", image: c.kind == "image"}
	var l *mcpcore.ServerLimits
	if c.cap > 0 {
		l = &mcpcore.ServerLimits{MaxResultChars: c.cap}
		if c.tail {
			l.TailChars = 200
		}
		if c.store {
			l.Store = mcpcore.NewStore(0, 0)
		}
	}
	url := serve(t, c.server, l, tl)
	p := dial(t, c.client, url, mcpcore.ClientLimits{MaxChars: max(c.clientChars, 0)})
	chars := func(s string) int { return utf8.RuneCountInString(s) }
	if c.kind == "fails" && c.cap == 0 {
		branch = "protocol error"
		err := p.callErr("t")
		if err == nil {
			return branch, []string{"a failing tool's call succeeded"}
		}
		if chars(err.Error()) > mcpcore.DefaultMaxErrorChars+200 {
			fail("an error of %d characters reached the caller", chars(err.Error()))
		}
		if c.size > mcpcore.DefaultMaxErrorChars && !strings.Contains(err.Error(), "these are its first and last 5000") {
			fail("an error of %d characters was not trimmed with the marker", c.size)
		}
		return branch, bad
	}
	o := p.call(t, "t")
	isError := c.kind == "error" || c.kind == "fails"
	if isError && !o.IsError {
		fail("a tool's error arrived without isError")
	}
	clientMax := mcpcore.DefaultMaxChars
	if c.clientChars > 0 {
		clientMax = c.clientChars
	}
	switch {
	case c.cap > 0 && c.size > c.cap:
		branch = "server cut"
		// The server cut it (or linked it): within its cap, marked; a
		// client whose ceiling is lower saved that to a file.
		shown := o.Text
		if o.File != "" {
			shown = o.File
		}
		if chars(shown) > c.cap || !strings.Contains(shown, fmt.Sprintf(" of %d characters", c.size)) {
			fail("over the server's cap: %d characters, want at most %d with the marker naming %d", chars(shown), c.cap, c.size)
		}
		if o.uri != "" {
			whole, err := p.readLink(o.uri)
			if err != nil || whole != tl.text {
				fail("the link reads back %d characters (%v), want the tool's %d", chars(whole), err, c.size)
			}
		}
	case isError && c.size > mcpcore.DefaultMaxErrorChars:
		branch = "error trimmed"
		if chars(o.Text) > mcpcore.DefaultMaxErrorChars || !strings.Contains(o.Text, "these are its first and last 5000") {
			fail("an error result of %d characters: %d arrived, want at most %d with the client's marker", c.size, chars(o.Text), mcpcore.DefaultMaxErrorChars)
		}
	case !isError && c.kind != "image" && c.size > clientMax:
		branch = "saved"
		if o.File != tl.text {
			fail("over the client's ceiling (%d): no file holding the result (text %.80q)", clientMax, o.Text)
		}
	case c.kind == "image":
		// A result with images is never saved: only the token ceiling (by
		// default 25,000 tokens, 100,000 characters) cuts it.
		branch = "image"
		if o.Text != tl.text || len(o.Kinds) != 2 {
			fail("a result with an image within the token ceiling: %d characters and %v arrived, not the tool's %d and its image", chars(o.Text), o.Kinds, c.size)
		}
	case isError || c.size <= clientMax:
		branch = "whole"
		if o.Text != tl.text {
			fail("within every cap: %d characters arrived, not the tool's %d", chars(o.Text), c.size)
		}
	}
	return branch, bad
}
