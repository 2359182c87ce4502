package mcpcore

import (
	"fmt"
)

// DefaultMaxResultChars is the cap of [ServerLimits] when MaxResultChars is
// zero.
const DefaultMaxResultChars = 20000

// MinResultChars is the smallest cap [ServerLimits] accepts: a smaller one
// leaves no room for the marker that says what was cut.
const MinResultChars = 256

// ServerLimits caps what an MCP server's tools return, in one place for all
// tools. This is its configuration and its behaviour, whatever the SDK; an
// adapter applies it (module github.com/boundhttp/boundhttp/mcpbound for
// the official Go SDK, github.com/boundhttp/boundhttp/mcpbound/mcpgo for
// mark3labs/mcp-go), through a [Server].
//
// What is measured is the text of a tools/call result: its text blocks and
// embedded text resources, plus the JSON serialization of its
// structuredContent when no text block already equals it (the structured
// result and its text copy are counted once). The count is of the result's
// characters: two blocks of 12,000 characters are 24,000. Images, audio,
// resource links and embedded binary resources are not text: they pass
// unchanged, bounded by the HTTP budget alone.
//
// A result over the cap (error results too) is replaced by one text block
// that holds the beginning of the text (its parts joined by "\n"), a
// newline and a marker beginning "[truncated: showing N of M characters",
// N and M plain decimal integers (M the result's characters, N those
// shown), followed by what the agent can do to get the rest; with
// TailChars, the block ends with a newline and the text's last TailChars
// characters. The whole block is at most MaxResultChars characters.
//
// A cut result carries no structuredContent (a cut JSON text is not valid
// JSON, and its text, cut, is in the block). The official TypeScript and
// Python clients refuse a result without structuredContent from a tool
// that declares an outputSchema (every typed tool of mcp.AddTool) unless
// the result is an error, and the specification requires structured
// content that conforms to the schema, which a part of it does not. So a
// result that had structuredContent is sent cut or linked with isError set,
// and its marker says that the tool succeeded and only the size made it an
// error: the clients then hand the marker and the link to the caller
// instead of throwing them away. A result without structuredContent keeps
// its isError.
//
// With a Store, a successful result over the cap is kept whole instead and
// the result carries a preview (the marker naming the link and its number
// of pages), and a resource_link whose URI the same middleware serves
// through resources/read (see [Server.Read]). Each page's data
// and its navigation note (which names the next page's URI, where a model
// reads it; see [NavigationKey]) together have at most MaxResultChars
// characters. A result the Store cannot hold (bigger than it may keep, or
// a store that cannot be reached) is cut as above, and the marker says
// why. Error results are never kept. Any middleware with the same Store
// serves the pages.
//
// ServerLimits is a value; its Server is safe for concurrent use.
type ServerLimits struct {
	// MaxResultChars is the most characters (Unicode code points, not
	// bytes) of text a tools/call result may carry, marker included; it is
	// also the most a page of a kept result (data and note) has. Zero
	// means DefaultMaxResultChars (20,000); a value below MinResultChars,
	// negative included, is a configuration error.
	MaxResultChars int

	// TailChars, if positive, makes every cut keep the last TailChars
	// characters of the text after the marker ("first K ... [marker] ...
	// last L"), for tools whose output ends with what matters (logs, test
	// runs); the head gets the rest of the room. The tail is shorter only
	// when the marker (which may name a link and explain isError) would not
	// fit beside it: the block never passes MaxResultChars. Zero keeps the
	// head alone;
	// negative, or more than MaxResultChars - MinResultChars (the room of
	// the marker), is a configuration error. A kept result's preview is
	// cut the same way; its pages are not.
	TailChars int

	// Store, if not nil, keeps results over the cap for reading by link:
	// a [*Store] (in memory, see [NewStore]) or any [ResultStore], such as
	// one in Redis shared by a fleet.
	Store ResultStore

	// Reads, if set, applies the cap to the answers of resources/read and
	// prompts/get of the server's own resources and prompts too: their text
	// (a resource's text contents, a prompt's text messages) over
	// MaxResultChars is cut with a marker that says so, never kept in the
	// Store; binary contents pass. Off by default: a server's resources and
	// prompts are its own, and a client may need them whole. The official
	// Go SDK's adapter applies it in its middleware; on mcp-go, wrap the
	// handlers (mcpgo.ServerLimits.Resource and Prompt).
	Reads bool
}

// Validate reports whether the limits are usable, and why not.
func (l ServerLimits) Validate() error {
	if l.MaxResultChars != 0 && l.MaxResultChars < MinResultChars {
		return fmt.Errorf("mcpbound: ServerLimits.MaxResultChars %d: below the minimum of %d characters (zero means the default, %d)",
			l.MaxResultChars, MinResultChars, DefaultMaxResultChars)
	}
	if l.TailChars < 0 || l.TailChars > l.max()-MinResultChars {
		return fmt.Errorf("mcpbound: ServerLimits.TailChars %d: outside 0 to %d (MaxResultChars less the room of the marker, %d)",
			l.TailChars, l.max()-MinResultChars, MinResultChars)
	}
	return nil
}

func (l ServerLimits) max() int {
	if l.MaxResultChars == 0 {
		return DefaultMaxResultChars
	}
	return l.MaxResultChars
}

// store returns the Store, nil for none (a nil *Store included).
func (l ServerLimits) store() ResultStore {
	if s, ok := l.Store.(*Store); ok && s == nil {
		return nil
	}
	return l.Store
}

// PageChars returns how many characters of a kept result of resultChars
// characters (its text items joined by newlines) each page but the last
// carries: MaxResultChars less the room
// of the page's navigation note. It is not checked: call Validate first.
func (l ServerLimits) PageChars(resultChars int) int { return l.max() - noteRoom(resultChars) }

// A Server is the checked configuration of a [ServerLimits], which an
// adapter calls for every tools/call result ([Server.Cap]) and for every
// resources/read of a URI it issued ([Server.Owns], [Server.Read]). It is
// safe for concurrent use.
type Server struct {
	max, tail int
	store     ResultStore // nil for none
	reads     bool        // ServerLimits.Reads
}

// NewServer returns the Server of l, or the error of [ServerLimits.Validate].
func NewServer(l ServerLimits) (*Server, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &Server{max: l.max(), tail: l.TailChars, store: l.store(), reads: l.Reads}, nil
}

// CapsReads reports whether the Server caps resources/read and prompts/get
// answers too (ServerLimits.Reads).
func (s *Server) CapsReads() bool { return s.reads }

// Keeps reports whether the Server keeps results over the cap (it has a
// store), so that an adapter serves their pages.
func (s *Server) Keeps() bool { return s.store != nil }

// Owns reports whether uri is a link this Server reads: it has a store and
// uri is in its scheme (see [ResultURIPrefix]).
func (s *Server) Owns(uri string) bool { return s.store != nil && isResultURI(uri) }
