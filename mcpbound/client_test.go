package mcpbound

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientRig is a ClientLimits middleware over a fake server.
type clientRig struct {
	h    mcp.MethodHandler
	next *mcp.CallToolResult
	list *mcp.ListToolsResult
	log  *bytes.Buffer
	dir  string
}

func newRig(t *testing.T, l ClientLimits) *clientRig {
	t.Helper()
	r := &clientRig{log: new(bytes.Buffer)}
	if l.SpillDir == "" {
		l.SpillDir = privateDir(t)
	}
	r.dir = l.SpillDir
	l.Logger = slog.New(slog.NewTextHandler(r.log, nil))
	r.h = l.Middleware()(func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			return r.list, nil
		}
		return r.next, nil
	})
	return r
}

// session is the one client session of these tests.
var session = &mcp.ClientSession{}

func (r *clientRig) call(t *testing.T, tool string, res *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	r.next = res
	out, err := r.h(context.Background(), "tools/call", &mcp.ClientRequest[*mcp.CallToolParams]{Session: session, Params: &mcp.CallToolParams{Name: tool}})
	if err != nil {
		t.Fatal(err)
	}
	return out.(*mcp.CallToolResult)
}

func (r *clientRig) listTools(t *testing.T, tools ...*mcp.Tool) {
	t.Helper()
	r.list = &mcp.ListToolsResult{Tools: tools}
	if _, err := r.h(context.Background(), "tools/list", &mcp.ClientRequest[*mcp.ListToolsParams]{Session: session, Params: &mcp.ListToolsParams{}}); err != nil {
		t.Fatal(err)
	}
}

var savedRE = regexp.MustCompile(`^\[saved: this tool result was saved to the file (\S+) \((\d+) characters, (\d+) bytes\) because (.+)\]$`)

// spilled reports whether out is the saved form of text, checking the file
// when it is.
func spilled(t *testing.T, out *mcp.CallToolResult, text string) bool {
	t.Helper()
	s := onlyText(t, out)
	m := savedRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	path := m[1]
	if !filepath.IsAbs(path) {
		t.Errorf("saved file %q is not an absolute path", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != text {
		t.Errorf("saved file holds %d bytes, not the %d bytes of the result", len(b), len(text))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("saved file mode %v, want 0600", fi.Mode().Perm())
	}
	if m[2] != itoa(chars(text)) || m[3] != itoa(len(text)) {
		t.Errorf("note says %s characters, %s bytes; want %d, %d", m[2], m[3], chars(text), len(text))
	}
	return true
}

// TestClientCharThreshold: exactly MaxChars characters pass untouched; one
// more goes to a file, byte-exact, mode 0600, named with its absolute
// path, size and reason. Sabotage: comparing with > ceiling+1 keeps the
// over-by-one result in context.
func TestClientCharThreshold(t *testing.T) {
	for _, maxChars := range []int{0, 3000} {
		r := newRig(t, ClientLimits{MaxChars: maxChars})
		if maxChars == 0 {
			maxChars = DefaultMaxChars
		}
		at := textResult(mixed(maxChars))
		if got := r.call(t, "t", at); got != at {
			t.Errorf("MaxChars %d: a result of exactly %d characters was changed", maxChars, maxChars)
		}
		over := mixed(maxChars + 1)
		out := r.call(t, "t", textResult(over))
		if !spilled(t, out, over) {
			t.Errorf("MaxChars %d: a result of %d characters was not saved: %q", maxChars, maxChars+1, clip(onlyText(t, out)))
		}
		if !strings.Contains(onlyText(t, out), "over the limit of "+itoa(maxChars)+" characters") {
			t.Errorf("note does not say why: %q", onlyText(t, out))
		}
	}
}

// TestClientTokenThreshold: exactly MaxTokens tokens pass, one more is
// saved; with the default estimate (4 characters a token) and with a
// counter of one token per character. Sabotage: > MaxTokens+1.
func TestClientTokenThreshold(t *testing.T) {
	for _, tc := range []struct {
		name          string
		l             ClientLimits
		atChars, over int
	}{
		{"estimate", ClientLimits{MaxChars: 200000}, 4 * DefaultMaxTokens, 4*DefaultMaxTokens + 1},
		{"per-char", ClientLimits{Tokens: chars}, DefaultMaxTokens, DefaultMaxTokens + 1},
		{"small", ClientLimits{MaxTokens: 100, WarnTokens: 50}, 400, 401},
	} {
		r := newRig(t, tc.l)
		at := textResult(strings.Repeat("t", tc.atChars))
		if got := r.call(t, "t", at); got != at {
			t.Errorf("%s: a result of exactly the token limit (%d characters) was changed", tc.name, tc.atChars)
		}
		over := strings.Repeat("t", tc.over)
		out := r.call(t, "t", textResult(over))
		if !spilled(t, out, over) || !strings.Contains(onlyText(t, out), "tokens") {
			t.Errorf("%s: one token over was not saved for its tokens: %q", tc.name, clip(onlyText(t, out)))
		}
	}
}

// TestClientWarnTokens: a warning above WarnTokens, none at it. Sabotage:
// > WarnTokens+1 stays silent one token over.
func TestClientWarnTokens(t *testing.T) {
	r := newRig(t, ClientLimits{})
	r.call(t, "t", textResult(strings.Repeat("w", 4*DefaultWarnTokens)))
	if r.log.Len() != 0 {
		t.Errorf("warning at exactly %d tokens: %s", DefaultWarnTokens, r.log)
	}
	r.call(t, "t", textResult(strings.Repeat("w", 4*DefaultWarnTokens+1)))
	if !strings.Contains(r.log.String(), "tokens=10001") {
		t.Errorf("no warning at %d tokens: %q", DefaultWarnTokens+1, r.log)
	}
}

// TestClientOverride: a tool's _meta["anthropic/maxResultSizeChars"] raises
// its ceiling up to HardMaxChars, never beyond, never lowers it, and lifts
// the token limit for that tool. Sabotage: not clamping to HardMaxChars
// keeps 500,001 characters in context.
func TestClientOverride(t *testing.T) {
	r := newRig(t, ClientLimits{})
	r.listTools(t,
		&mcp.Tool{Name: "raised", Meta: mcp.Meta{MaxResultSizeCharsKey: float64(200000)}},
		&mcp.Tool{Name: "beyond", Meta: mcp.Meta{MaxResultSizeCharsKey: float64(900000)}},
		&mcp.Tool{Name: "lowered", Meta: mcp.Meta{MaxResultSizeCharsKey: float64(1000)}},
		&mcp.Tool{Name: "plain"})
	for _, tc := range []struct {
		tool    string
		ceiling int
	}{{"raised", 200000}, {"beyond", DefaultHardMaxChars}, {"lowered", DefaultMaxChars}, {"plain", DefaultMaxChars}} {
		at := textResult(strings.Repeat("o", tc.ceiling))
		if got := r.call(t, tc.tool, at); got != at {
			t.Errorf("%s: %d characters (its ceiling) were changed", tc.tool, tc.ceiling)
		}
		over := strings.Repeat("o", tc.ceiling+1)
		if out := r.call(t, tc.tool, textResult(over)); !spilled(t, out, over) {
			t.Errorf("%s: %d characters were not saved", tc.tool, tc.ceiling+1)
		}
	}
	// A new first page of tools/list replaces what was learnt.
	r.listTools(t, &mcp.Tool{Name: "plain"})
	if out := r.call(t, "raised", textResult(strings.Repeat("o", 60000))); !spilled(t, out, strings.Repeat("o", 60000)) {
		t.Errorf("an override outlived the tools/list that dropped it")
	}
}

// TestClientErrorTrim: an error of MaxErrorChars passes; one more keeps its
// first and last 5,000 characters with the marker between. Sabotage:
// > MaxErrorChars+1.
func TestClientErrorTrim(t *testing.T) {
	r := newRig(t, ClientLimits{})
	at := textResult(mixed(DefaultMaxErrorChars))
	at.IsError = true
	if got := r.call(t, "t", at); got != at {
		t.Errorf("an error of exactly %d characters was changed", DefaultMaxErrorChars)
	}
	s := mixed(DefaultMaxErrorChars + 1)
	over := textResult(s)
	over.IsError = true
	out := onlyText(t, r.call(t, "t", over))
	n, m := parseMarker(t, out)
	if n != 10000 || m != DefaultMaxErrorChars+1 {
		t.Errorf("marker %d of %d, want 10000 of %d", n, m, DefaultMaxErrorChars+1)
	}
	if !strings.HasPrefix(out, head(s, 5000)+"\n[truncated: ") || !strings.HasSuffix(out, "]\n"+tail(s, 5000)) {
		t.Errorf("trimmed error is not head, marker, tail: %q", clip(out))
	}
	if entries, _ := os.ReadDir(r.dir); len(entries) != 0 {
		t.Errorf("an error was saved to a file")
	}
}

// TestClientImagesOnlyTokenCeiling: a result with an image is never saved
// to a file and only the token ceiling applies to it, as in Claude Code:
// 60,000 characters (15,000 estimated tokens) pass whole, over the
// 50,000-character ceiling; 30,000 tokens are cut to 25,000 with the
// marker, the image kept. Sabotage: applying the character ceiling to
// results with images cuts the first to 50,000 characters.
func TestClientImagesOnlyTokenCeiling(t *testing.T) {
	img := &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}
	r := newRig(t, ClientLimits{})
	whole := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: mixed(60000)}, img}}
	if out := r.call(t, "t", whole); out != whole {
		t.Errorf("a result with an image of 60,000 characters, 15,000 tokens, was changed: %q", clip(onlyText(t, out)))
	}
	for _, tc := range []struct {
		name string
		l    ClientLimits
		n    int
	}{
		{"tokens", ClientLimits{Tokens: chars, MaxChars: 10000}, 30000},
		{"tokens, tool's own ceiling ignored", ClientLimits{Tokens: chars}, 60000},
	} {
		r := newRig(t, tc.l)
		r.listTools(t, &mcp.Tool{Name: "t", Meta: mcp.Meta{MaxResultSizeCharsKey: float64(100000)}})
		s := mixed(tc.n)
		out := r.call(t, "t", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}, img}})
		if len(out.Content) != 2 || out.Content[1] != img {
			t.Fatalf("%s: content %v, want the text then the image", tc.name, out.Content)
		}
		text := onlyText(t, out)
		n, m := parseMarker(t, text)
		if m != tc.n || !strings.HasPrefix(text, head(s, n)) || chars(text) > DefaultMaxTokens || n < DefaultMaxTokens-500 {
			t.Errorf("%s: %d characters shown of %d (marker %d of %d), want at most %d tokens", tc.name, chars(text), tc.n, n, m, DefaultMaxTokens)
		}
		if entries, _ := os.ReadDir(r.dir); len(entries) != 0 {
			t.Errorf("%s: a result with an image was saved to a file", tc.name)
		}
	}
}

// TestClientSpillFolderBound: the result files never exceed MaxSpillBytes:
// the oldest go first, and a result bigger than the bound is cut with the
// marker instead. Sabotage: skipping makeRoom lets the folder grow.
func TestClientSpillFolderBound(t *testing.T) {
	r := newRig(t, ClientLimits{MaxChars: 1000, MaxSpillBytes: 5000})
	other := filepath.Join(r.dir, "notes.txt")
	os.WriteFile(other, bytes.Repeat([]byte("n"), 9000), 0o600)
	var first string
	for i := 0; i < 5; i++ {
		s := strings.Repeat(string(rune('a'+i)), 2000)
		out := r.call(t, "t", textResult(s))
		if !spilled(t, out, s) {
			t.Fatalf("result %d not saved", i)
		}
		if i == 0 {
			first = savedRE.FindStringSubmatch(onlyText(t, out))[1]
		}
		var sum int64
		entries, _ := os.ReadDir(r.dir)
		for _, e := range entries {
			if fi, _ := e.Info(); strings.HasPrefix(e.Name(), spillPrefix) {
				sum += fi.Size()
			}
		}
		if sum > 5000 {
			t.Errorf("after %d results the folder holds %d bytes of results, bound 5000", i+1, sum)
		}
	}
	if _, err := os.Stat(first); err == nil {
		t.Error("the oldest result file survived")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file this package did not write was touched: %v", err)
	}
	big := strings.Repeat("z", 5001)
	out := onlyText(t, r.call(t, "t", textResult(big)))
	if n, m := parseMarker(t, out); m != 5001 || n > 1000 || !strings.Contains(out, "could not be saved") {
		t.Errorf("result over the folder bound: %q", clip(out))
	}
}

// TestClientLimitsValidate: negative fields are configuration errors that
// Middleware panics on; zero takes the defaults.
func TestClientLimitsValidate(t *testing.T) {
	for _, l := range []ClientLimits{{WarnTokens: -1}, {MaxTokens: -1}, {MaxChars: -1}, {HardMaxChars: -1},
		{MaxErrorChars: -1}, {MaxSpillBytes: -1}, {MaxChars: 600000}, {MaxErrorChars: 10000}} {
		if l.Validate() == nil {
			t.Errorf("%+v accepted", l)
		}
	}
	if err := (ClientLimits{}).Validate(); err != nil {
		t.Error(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Middleware of an invalid configuration did not panic")
		}
	}()
	ClientLimits{MaxTokens: -1}.Middleware()
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestClientStructuredKeyOrderCountedOnce: a tool returns a struct as
// structuredContent and its JSON as text, as the spec advises; the client receives the
// structured content as a map, whose re-serialization sorts the keys, so a
// byte comparison with the text block fails whenever the output struct's
// fields are not in alphabetical order. The pair must still be counted
// once: 30,000 characters of text are under a 40,000-character ceiling.
// Found: the client counted 60,001 characters and saved the result to a
// file "because it is 60001 characters".
func TestClientStructuredKeyOrderCountedOnce(t *testing.T) {
	type out struct {
		Zeta  string `json:"zeta"`
		Alpha int    `json:"alpha"`
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "v1"}, nil)
	z := strings.Repeat("z", 30000)
	o := out{Zeta: z, Alpha: 1}
	js, _ := json.Marshal(o)
	server.AddTool(&mcp.Tool{Name: "typed", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The spec's advice: the structured content, and its JSON as text.
		return &mcp.CallToolResult{StructuredContent: o, Content: []mcp.Content{&mcp.TextContent{Text: string(js)}}}, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	dir := privateDir(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v1"}, nil)
	client.AddSendingMiddleware(ClientLimits{MaxChars: 40000, SpillDir: dir, Logger: slog.New(slog.DiscardHandler)}.Middleware())
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "typed", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := onlyText(t, res)
	if want := `{"zeta":"` + z + `","alpha":1}`; text != want || res.StructuredContent == nil {
		t.Errorf("a 30,000-character typed result under a 40,000-character ceiling was changed: %q", clip(text))
	}
}

// TestClientHostileServer: names and _meta a hostile server chooses cannot
// steer the client: a tool name with path separators, "..", a glob or a
// NUL makes a file inside SpillDir; a negative, fractional, textual or
// enormous maxResultSizeChars, or one on a tool never listed, gives no
// override; a symlink in SpillDir that looks like a result file is
// neither followed nor removed when the folder is made room in.
func TestClientHostileServer(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRig(t, ClientLimits{MaxChars: 1000, HardMaxChars: 2000, MaxSpillBytes: 3000})
	link := filepath.Join(r.dir, spillPrefix+"link-1"+spillSuffix)
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	r.listTools(t,
		&mcp.Tool{Name: "neg", Meta: mcp.Meta{MaxResultSizeCharsKey: float64(-5000)}},
		&mcp.Tool{Name: "frac", Meta: mcp.Meta{MaxResultSizeCharsKey: 1500.5}},
		&mcp.Tool{Name: "text", Meta: mcp.Meta{MaxResultSizeCharsKey: "1500"}},
		&mcp.Tool{Name: "huge", Meta: mcp.Meta{MaxResultSizeCharsKey: 1e300}},
		&mcp.Tool{Name: "nested", Meta: mcp.Meta{MaxResultSizeCharsKey: map[string]any{"n": 1500.0}}})
	text := strings.Repeat("h", 1500)
	for _, tool := range []string{"neg", "frac", "text", "huge", "nested", "unlisted",
		"../../../../tmp/evil", "/etc/passwd", "a/../../b", "..", "*", "x\x00y", `..\..\win`, strings.Repeat("long/", 2000)} {
		out := r.call(t, tool, textResult(text))
		if !spilled(t, out, text) {
			t.Errorf("tool %q: 1,500 characters over a 1,000 ceiling were not saved: %q", clip(tool), clip(onlyText(t, out)))
			continue
		}
		path := savedRE.FindStringSubmatch(onlyText(t, out))[1]
		if filepath.Dir(path) != r.dir || strings.Contains(filepath.Base(path), "..") {
			t.Errorf("tool %q: saved as %s, outside %s", clip(tool), path, r.dir)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me" {
		t.Errorf("the symlink's target was changed: %q, %v", b, err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the symlink was removed: %v", err)
	}
}

// TestClientCutFitsCeiling: a cut result (a file that cannot be written) is at most the tool's character ceiling, marker included, at
// every ceiling Validate accepts; a ceiling too small for any marker is a
// configuration error. Found: MaxChars 1 to 100 were accepted and the cut
// of a result with an image was a 119-character marker.
func TestClientCutFitsCeiling(t *testing.T) {
	for _, mc := range []int{1, 100, MinClientChars - 1} {
		if (ClientLimits{MaxChars: mc}).Validate() == nil {
			t.Errorf("MaxChars %d accepted", mc)
		}
	}
	r := newRig(t, ClientLimits{MaxChars: MinClientChars, MaxSpillBytes: 1000})
	out := r.call(t, "t", textResult(strings.Repeat("a", 5000)))
	if n, m := parseMarker(t, onlyText(t, out)); chars(onlyText(t, out)) > MinClientChars || m != 5000 || n == 0 {
		t.Errorf("cut of a result not saved: %d characters (%d of %d shown), ceiling %d", chars(onlyText(t, out)), n, m, MinClientChars)
	}
}

// TestClientErrorTrimNeverGrows: at every MaxErrorChars Validate accepts,
// a trimmed error is at most MaxErrorChars characters, marker included,
// and never longer than the error it trims. Found: MaxErrorChars 10,001
// was accepted, and an error of 10,002 characters came out as 10,145.
func TestClientErrorTrimNeverGrows(t *testing.T) {
	for _, max := range []int{10001, 10100, 10200, 10256, 10300, DefaultMaxErrorChars} {
		l := ClientLimits{MaxErrorChars: max}
		if l.Validate() != nil {
			continue
		}
		r := newRig(t, l)
		s := mixed(max + 1)
		out := onlyText(t, r.call(t, "t", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}))
		if c := chars(out); c > max || c > chars(s) {
			t.Errorf("MaxErrorChars %d: an error of %d characters was trimmed to %d", max, chars(s), c)
		}
	}
}

// TestClientConcurrentSessions: many sessions list tools and call them at
// once through one middleware: each session's override is its own, and
// the spill folder stays within MaxSpillBytes. Run with -race.
func TestClientConcurrentSessions(t *testing.T) {
	dir := privateDir(t)
	mw := ClientLimits{MaxChars: 1000, HardMaxChars: 3000, MaxSpillBytes: 20000, SpillDir: dir, Logger: slog.New(slog.DiscardHandler)}.Middleware()
	done := make(chan string, 8)
	for g := 0; g < 8; g++ {
		go func() {
			s := &mcp.ClientSession{}
			raised := g%2 == 0
			list := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "t"}}}
			if raised {
				list.Tools[0].Meta = mcp.Meta{MaxResultSizeCharsKey: float64(3000)}
			}
			text := strings.Repeat(string(rune('a'+g)), 2000)
			h := mw(func(_ context.Context, method string, _ mcp.Request) (mcp.Result, error) {
				if method == "tools/list" {
					return list, nil
				}
				return textResult(text), nil
			})
			if _, err := h(context.Background(), "tools/list", &mcp.ClientRequest[*mcp.ListToolsParams]{Session: s, Params: &mcp.ListToolsParams{}}); err != nil {
				done <- err.Error()
				return
			}
			for i := 0; i < 10; i++ {
				out, err := h(context.Background(), "tools/call", &mcp.ClientRequest[*mcp.CallToolParams]{Session: s, Params: &mcp.CallToolParams{Name: "t"}})
				if err != nil {
					done <- err.Error()
					return
				}
				got := out.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text
				if raised != (got == text) || (!raised && !strings.HasPrefix(got, "[saved: ")) {
					done <- "session " + itoa(g) + ": " + clip(got)
					return
				}
			}
			done <- ""
		}()
	}
	for g := 0; g < 8; g++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
	entries, _ := os.ReadDir(dir)
	var sum int64
	for _, e := range entries {
		fi, _ := e.Info()
		sum += fi.Size()
	}
	if sum > 20000 {
		t.Errorf("spill folder holds %d bytes, bound 20000", sum)
	}
}
