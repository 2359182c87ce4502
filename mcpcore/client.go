package mcpcore

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Client defaults, used for zero fields of [ClientLimits]: the ceilings
// Claude Code documents for MCP tool output.
const (
	DefaultWarnTokens    = 10000
	DefaultMaxTokens     = 25000
	DefaultMaxChars      = 50000
	DefaultHardMaxChars  = 500000
	DefaultMaxErrorChars = 11000
	DefaultMaxSpillBytes = 256 << 20
)

// MinClientChars is the smallest MaxChars [ClientLimits] accepts: room for
// the marker of a cut (with the reason a file could not be written, echoed
// to at most a few hundred characters) and some of the text.
const MinClientChars = 512

// MaxResultSizeCharsKey is the member of a tool's _meta (in its tools/list
// entry) through which a tool raises its own character ceiling.
const MaxResultSizeCharsKey = "anthropic/maxResultSizeChars"

// errorEndChars is how many characters of each end of a long error text are
// kept.
const errorEndChars = 5000

// minErrorChars is the smallest MaxErrorChars: the two ends kept and room
// for the marker between them, so that a trimmed error is never longer
// than MaxErrorChars (nor than the error it trims).
const minErrorChars = 2*errorEndChars + MinResultChars

// ClientLimits applies to tool results the ceilings real MCP clients apply.
// This is its configuration and its behaviour, whatever the SDK; an adapter
// applies it (module github.com/boundhttp/boundhttp/mcpbound for the
// official Go SDK, github.com/boundhttp/boundhttp/mcpbound/mcpgo for
// mark3labs/mcp-go), through a [Client].
//
// The text of a result is measured as [ServerLimits] measures it: its text
// blocks' characters, plus structuredContent's JSON unless a text block
// equals it; a saved file or a cut holds the blocks joined by "\n". For a successful tools/call result:
//   - above WarnTokens, a warning is logged;
//   - above MaxTokens or above the tool's character ceiling (MaxChars, or
//     the tool's own _meta["anthropic/maxResultSizeChars"], at most
//     HardMaxChars), the full text is written byte-exact to a new file
//     (mode 0600) under SpillDir (a folder private to the user) and the result's text and structured
//     content are replaced by one text block naming the file's absolute
//     path, its size in characters and bytes and why it was saved; other
//     content (links, embedded resources) stays;
//   - a result that contains an image is never saved to a file, and only
//     MaxTokens applies to it (as in Claude Code; neither MaxChars nor a
//     tool's own ceiling): above it, its text is cut to fit MaxTokens, with
//     the marker "[truncated: showing N of M characters; ...]"; images
//     themselves are not counted;
//   - a result that cannot be saved (bigger than MaxSpillBytes, or the
//     file cannot be written) is cut the same way, and the marker says why.
//
// An error result (isError) longer than MaxErrorChars keeps its first and
// last 5,000 characters with the marker between them; errors are never
// saved. Nothing is cut silently.
//
// A tool that sets _meta["anthropic/maxResultSizeChars"] to a positive
// integer N in its tools/list entry gets the ceiling min(N, HardMaxChars)
// in place of MaxChars when that is larger (an override cannot lower it),
// and MaxTokens does not apply to it: the tool has declared the size it
// needs. The adapter learns these from the tools/list results it sees
// (per session, every page of the list), so a client must list tools
// before calling them for overrides to apply. It remembers them for the
// latest 1,024 sessions, at most 4,096 tools each.
//
// Characters are Unicode code points; tokens are what Tokens counts. Zero
// fields take the defaults; a negative one is a configuration error (see
// [ClientLimits.Validate]). A [Client] is safe for concurrent use.
type ClientLimits struct {
	// WarnTokens: a successful result of more tokens is logged as a
	// warning. Zero means 10,000.
	WarnTokens int
	// MaxTokens: a successful result of more tokens is saved to a file
	// (or cut, when it has images). Zero means 25,000.
	MaxTokens int
	// MaxChars: a successful result of more characters is saved to a file
	// whatever its token count. Zero means 50,000; below MinClientChars
	// (512) is a configuration error.
	MaxChars int
	// HardMaxChars is the most a tool may raise its own MaxChars to. Zero
	// means 500,000; below MaxChars is a configuration error.
	HardMaxChars int
	// MaxErrorChars: an error text of more characters keeps its first and
	// last 5,000 characters. Zero means 11,000; values below 10,256 are a
	// configuration error (the two ends and the marker would not fit).
	MaxErrorChars int
	// MaxSpillBytes bounds the total size, in bytes, of the result files
	// in SpillDir: before a new file is written, the oldest result files
	// the core wrote there are removed until it fits. It holds per folder
	// across every Client of the process (parallel sessions sharing a
	// SpillDir); clients in other processes are not seen. Files of other
	// origins are neither counted nor touched. Zero means 256 MiB.
	MaxSpillBytes int64
	// TailChars, if positive, makes every cut this middleware makes (of a
	// result with images, or of one that could not be saved) keep the last
	// TailChars characters after the marker ("first K ... [marker] ... last
	// L"), fewer only when the tokens of the tail alone exceed MaxTokens.
	// Zero keeps the head alone; negative, or more than MaxChars -
	// MinClientChars, is a configuration error. Error trimming keeps both
	// ends whatever TailChars says.
	TailChars int
	// SpillDir is the folder of saved results. It must be a directory
	// owned by the process's user that neither group nor others may write
	// to (an ordinary 0755 folder is accepted: saved files are mode 0600),
	// given as itself, not through a symbolic link, below folders owned
	// by the user or root that others may write to only with the sticky
	// bit (as /tmp); a missing one is created (mode 0700). A folder that
	// fails these checks is refused:
	// nothing is saved there, and the result is cut with a marker that
	// says why (another local user who made the folder first in a shared
	// temporary directory could otherwise read the results or replace a
	// file after it was written). Empty means a folder
	// "mcpbound-results-<uid>" in os.TempDir().
	SpillDir string
	// Logger receives the warnings; nil means slog.Default().
	Logger *slog.Logger
	// Tokens counts the tokens of a text. Nil means an estimate, not a
	// tokenizer: one token per four characters, rounded up.
	Tokens func(string) int
}

// Validate reports whether the limits are usable, and why not.
func (l ClientLimits) Validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"WarnTokens", int64(l.WarnTokens)}, {"MaxTokens", int64(l.MaxTokens)}, {"MaxChars", int64(l.MaxChars)},
		{"HardMaxChars", int64(l.HardMaxChars)}, {"MaxErrorChars", int64(l.MaxErrorChars)}, {"MaxSpillBytes", l.MaxSpillBytes},
		{"TailChars", int64(l.TailChars)}} {
		if f.v < 0 {
			return fmt.Errorf("mcpbound: ClientLimits.%s %d: negative (zero means the default)", f.name, f.v)
		}
	}
	d := l.withDefaults()
	if d.MaxChars < MinClientChars {
		return fmt.Errorf("mcpbound: ClientLimits.MaxChars %d: below the minimum of %d characters (zero means the default, %d)",
			d.MaxChars, MinClientChars, DefaultMaxChars)
	}
	if d.HardMaxChars < d.MaxChars {
		return fmt.Errorf("mcpbound: ClientLimits.HardMaxChars %d below MaxChars %d", d.HardMaxChars, d.MaxChars)
	}
	if d.TailChars > d.MaxChars-MinClientChars {
		return fmt.Errorf("mcpbound: ClientLimits.TailChars %d: above %d (MaxChars less the room of the marker, %d)",
			d.TailChars, d.MaxChars-MinClientChars, MinClientChars)
	}
	if d.MaxErrorChars < minErrorChars {
		return fmt.Errorf("mcpbound: ClientLimits.MaxErrorChars %d: below %d, the two ends kept and room for the marker", d.MaxErrorChars, minErrorChars)
	}
	return nil
}

// withDefaults returns l with zero fields set to their defaults.
func (l ClientLimits) withDefaults() ClientLimits {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&l.WarnTokens, DefaultWarnTokens)
	def(&l.MaxTokens, DefaultMaxTokens)
	def(&l.MaxChars, DefaultMaxChars)
	def(&l.HardMaxChars, DefaultHardMaxChars)
	def(&l.MaxErrorChars, DefaultMaxErrorChars)
	if l.MaxSpillBytes == 0 {
		l.MaxSpillBytes = DefaultMaxSpillBytes
	}
	if l.SpillDir == "" {
		l.SpillDir = filepath.Join(os.TempDir(), "mcpbound-results-"+strconv.Itoa(max(os.Geteuid(), 0)))
	}
	if l.Logger == nil {
		l.Logger = slog.Default()
	}
	if l.Tokens == nil {
		l.Tokens = EstimateTokens
	}
	return l
}

// EstimateTokens is the default token count of [ClientLimits]: one token per
// four characters (code points), rounded up. It is an estimate, not a
// tokenizer.
func EstimateTokens(s string) int { return (chars(s) + 3) / 4 }

// A Client is the checked configuration of a [ClientLimits] and what it
// learned, which an adapter calls for every tools/list result
// ([Client.Learn]) and every tools/call result ([Client.Apply]). It is
// safe for concurrent use.
type Client struct {
	ClientLimits
	mu        sync.Mutex
	overrides map[any]map[string]int // per session: tool name to its character ceiling
	sessions  []any                  // oldest first, at most maxSessions
}

// NewClient returns the Client of l, or the error of
// [ClientLimits.Validate]. SpillDir is made an absolute path here.
func NewClient(l ClientLimits) (*Client, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	c := &Client{ClientLimits: l.withDefaults(), overrides: map[any]map[string]int{}}
	if abs, err := filepath.Abs(c.SpillDir); err == nil {
		c.SpillDir = abs
	}
	return c, nil
}

// maxSessions bounds the sessions whose overrides are remembered.
const maxSessions = 1024

// maxOverrides bounds the tools remembered per session.
const maxOverrides = 4096

// A ToolCeiling is what a tools/list entry says of a tool's own ceiling:
// its name, and the value of _meta["anthropic/maxResultSizeChars"] as
// decoded from JSON (a float64; nil when absent).
type ToolCeiling struct {
	Name               string
	MaxResultSizeChars any
}

// Learn records the character ceilings tools declare in a page of a
// tools/list result of session (any comparable value naming the session);
// firstPage (a request without a cursor) forgets what the session's
// earlier lists said.
func (c *Client) Learn(session any, firstPage bool, tools []ToolCeiling) {
	s := session
	c.mu.Lock()
	defer c.mu.Unlock()
	m, known := c.overrides[s]
	if !known || firstPage {
		if !known {
			if len(c.sessions) == maxSessions {
				delete(c.overrides, c.sessions[0])
				c.sessions = c.sessions[1:]
			}
			c.sessions = append(c.sessions, s)
		}
		m = map[string]int{}
		c.overrides[s] = m
	}
	for _, t := range tools {
		if len(m) >= maxOverrides {
			continue
		}
		if n, ok := positiveInt(t.MaxResultSizeChars); ok {
			m[t.Name] = min(n, c.HardMaxChars)
		}
	}
}

// positiveInt returns v as a positive int, if it is one (JSON numbers
// arrive as float64).
func positiveInt(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f < 1 || f != float64(int64(f)) || f > 1<<53 {
		return 0, false
	}
	return int(f), true
}

// ceiling returns the character ceiling of tool and whether it is the
// tool's own (which lifts MaxTokens).
func (c *Client) ceiling(s any, tool string) (int, bool) {
	c.mu.Lock()
	n, ok := c.overrides[s][tool]
	c.mu.Unlock()
	if ok && n > c.MaxChars {
		return n, true
	}
	return c.MaxChars, false
}
