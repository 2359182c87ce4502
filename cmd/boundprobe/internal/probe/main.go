package probe

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/schema"
)

// maxMaxSize is the largest -max-size accepted: 1 TiB.
const maxMaxSize = 1 << 40

const usageText = `usage: boundprobe [flags] URL

Measures the largest request body the path to URL accepts, for identity and
for gzip bodies, by bisection, and reports who answered each refusal (a
boundhttp problem document, another problem+json, a proxy's page) and
whether the answer arrived or the connection was reset.

Traffic: every request goes to URL and nowhere else (no proxy from the
environment, no redirect followed), one new HTTP/1.1 connection per request,
at most -max-requests bodies per search (two searches: identity and gzip),
each generated (never read from disk). With -mcp, four more requests to URL:
initialize, notifications/initialized, tools/list (per page) and a DELETE
that ends the session.

A body counts as refused when no answer arrives, when the answer is 413 or
415, or when it is a boundhttp problem document of a size stage; any other
answer (even 400 or 401) means it got through the size limits. JSON content
types get JSON bodies of exactly the size tried. The gzip search bisects on
the decoded size; its ceiling is the wire size of the largest accepted body,
decoded_ceiling its decoded size.

A tool's largest request is sized for clients that escape non-ASCII (an
emoji as 12 bytes, as the Python MCP SDK on httpx before 0.28 sends it), the
widest an official SDK's client writes.

Exit status: 0 every tool fits (or no -mcp), 3 a tool's largest request does
not fit the identity ceiling with -headroom, 1 usage error, 4 target
unreachable (or no MCP answer).

Flags:
`

// Main runs the boundprobe command with args (without the program name),
// writing the report to stdout and diagnostics to stderr, and returns the
// exit status: [ExitFit], [ExitUsage], [ExitNoFit] or [ExitUnreachable].
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, asJSON, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitFit
	}
	if err != nil {
		fmt.Fprintln(stderr, "boundprobe:", err)
		fmt.Fprintln(stderr, "run boundprobe -h for the usage")
		return ExitUsage
	}
	rep, err := Run(ctx, c)
	if err != nil {
		fmt.Fprintln(stderr, "boundprobe:", err)
		return ExitCode(nil, err)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		enc.Encode(rep)
	} else {
		writeTable(stdout, rep)
	}
	return ExitCode(rep, nil)
}

// parseArgs reads the command line into a Config.
func parseArgs(args []string, stderr io.Writer) (Config, bool, error) {
	c := Config{Header: http.Header{}}
	fs := flag.NewFlagSet("boundprobe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the report as JSON")
	fs.BoolVar(&c.MCP, "mcp", false, "URL is an MCP endpoint: list its tools and check each tool's largest request against the identity ceiling")
	fs.IntVar(&c.MaxRequests, "max-requests", 40, "most bodies sent per search (identity, gzip)")
	fs.DurationVar(&c.Pause, "pause", 100*time.Millisecond, "wait between requests (a Go duration; 0 for none)")
	maxSize := fs.String("max-size", "64MiB", "largest body tried, decoded bytes (suffixes KiB, MiB, GiB)")
	fs.StringVar(&c.Method, "X", http.MethodPost, "method of the probe requests (-mcp: POST)")
	fs.StringVar(&c.ContentType, "content-type", "application/json", "Content-Type of the probe bodies; a JSON type makes JSON bodies (-mcp: application/json)")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Second, "bound on each request, from connecting to the answer")
	fs.Float64Var(&c.Headroom, "headroom", schema.DefaultHeadroom, "fraction added to each tool's largest request before the comparison (schema.CheckBudget)")
	fs.Func("H", "header `Name: value` sent with every request (repeatable)", func(s string) error {
		return addHeader(c.Header, s)
	})
	// Flags may follow the URL: parse what follows it again.
	var rest []string
	for range len(args) + 1 {
		if err := fs.Parse(args); err != nil {
			return c, false, err
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(rest) != 1 {
		return c, false, fmt.Errorf("want one URL, got %d arguments", len(rest))
	}
	c.URL = rest[0]
	var err error
	if c.MaxSize, err = parseSize(*maxSize); err != nil {
		return c, false, fmt.Errorf("-max-size: %w", err)
	}
	if err := c.Validate(); err != nil {
		return c, false, err
	}
	return c, *asJSON, nil
}

// reserved are the headers the probe sets itself.
var reserved = []string{"Host", "Content-Length", "Content-Encoding", "Transfer-Encoding", "Connection", "Content-Type", "Expect", "Te", "Upgrade", "Trailer"}

// addHeader adds "Name: value" to h.
func addHeader(h http.Header, s string) error {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok {
		return fmt.Errorf("want Name: value, got %q", s)
	}
	if err := checkHeader(name, value); err != nil {
		return err
	}
	h.Add(name, value)
	return nil
}

// checkHeader reports whether a header the caller gives may be sent with
// every request: a token for a name, no line break or NUL in the value, and
// none of the headers the probe sets itself.
func checkHeader(name, value string) error {
	if !isToken(name) || strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("want Name: value, got %q", limits.Echo(name+": "+value))
	}
	for _, r := range reserved {
		if strings.EqualFold(name, r) {
			return fmt.Errorf("%s is set by the probe (use -content-type for the type)", r)
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// parseSize reads a byte count with an optional binary suffix.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = v, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxMaxSize/mult {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	return n * mult, nil
}
