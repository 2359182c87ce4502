// Command fetch is a fetch tool for agents: it GETs one URL through
// boundhttp.Transport and prints a boundhttp.Result as JSON. A body that
// breaks the budget is reported as rejected, with the stage and the limit,
// and none of its bytes.
//
// Usage:
//
//	fetch [flags] URL
//
// With -spill-dir, a whole body (complete or http_error) longer than
// -spill-chars characters as printed (default 50,000, the size above which
// Claude Code saves a tool result to a file; JSON escapes count their
// characters, \u0000 six, <, > and & one, as fetch prints them unescaped,
// and a body that is not UTF-8 its base64 form) is written to a new file under that
// directory (mode 0600, byte for byte) and the printed Result carries no
// body but a "spilled" member with the file's absolute path and size. The
// oldest spilled files (fetch-<digits>.txt or .bin, the names fetch gives
// them; other files are left alone) are removed first so that they total at
// most -spill-max-bytes (default 256 MiB, as mcpbound's ClientLimits).
// The directory must be the user's to change alone (owned by the user,
// writable by neither group nor others, not a symbolic link; an ordinary
// 0755 folder is fine, the files are mode 0600; a missing one is created
// with mode 0700): another is refused, since a local user who can write in
// it could replace the file after it was written. A body that needs no
// spilling is printed whatever the folder.
// Without -spill-dir nothing is spilled. If the file cannot be written the
// body is withheld all the same, "spill_error" says why and the exit status
// is 4.
//
// With -ca, HTTPS servers are trusted when a certificate authority in that
// PEM file signed their certificate, instead of the system's authorities.
//
// Exit status: 0 complete (or preview), 2 the server answered 4xx/5xx,
// 3 rejected by the budget, 4 failed (network, TLS, protocol), 1 bad usage.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// Exit statuses.
const (
	exitComplete  = 0
	exitUsage     = 1
	exitHTTPError = 2
	exitRejected  = 3
	exitFailed    = 4
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var b limits.Budget
	fs.Int64Var(&b.MaxWireBytes, "max-wire", 0, "body bytes read off the connection, before decoding (0: 4 MiB)")
	fs.Int64Var(&b.MaxDecodedBytes, "max-decoded", 0, "body bytes after decoding (0: 4 MiB)")
	fs.Int64Var(&b.MaxDecodedRunes, "max-chars", 0, "characters of the body, after decoding and as printed in JSON (escapes and base64 counted; 0: no separate cap)")
	fs.Float64Var(&b.MaxRatio, "max-ratio", 0, "decoded/wire ratio (0: off)")
	fs.DurationVar(&b.Timeout, "body-timeout", 30*time.Second, "time to read and verify the body")
	preview := fs.Int64("preview", 0, "return at most this many decoded bytes, labelled incomplete (0: whole body)")
	timeout := fs.Duration("timeout", time.Minute, "time for the whole request")
	spillDir := fs.String("spill-dir", "", "write a whole body longer than -spill-chars to a new file here and print its path instead (empty: never)")
	spillChars := fs.Int64("spill-chars", defaultSpillChars, "characters above which a body is spilled to -spill-dir (0: any non-empty body)")
	spillMax := fs.Int64("spill-max-bytes", 0, "total bytes of spilled files kept in -spill-dir; the oldest go first (0: 256 MiB)")
	caFile := fs.String("ca", "", "PEM file of the certificate authorities to trust for HTTPS instead of the system's (empty: the system's)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fetch [flags] URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	if *spillChars < 0 || *spillMax < 0 {
		fmt.Fprintln(stderr, "fetch: -spill-chars and -spill-max-bytes must not be negative")
		return exitUsage
	}
	if *spillMax == 0 {
		*spillMax = defaultSpillMaxBytes
	}
	if err := b.Validate(); err != nil {
		fmt.Fprintln(stderr, "fetch:", err)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fs.Arg(0), nil)
	if err != nil {
		fmt.Fprintln(stderr, "fetch:", err)
		return exitUsage
	}
	tr := &boundhttp.Transport{Budget: b}
	if *caFile != "" {
		base, err := trusting(*caFile)
		if err != nil {
			fmt.Fprintln(stderr, "fetch:", err)
			return exitUsage
		}
		tr.Base = base
	}
	client := &http.Client{Transport: tr}
	var r boundhttp.Result
	if *preview > 0 {
		r = boundhttp.Preview(client, req, *preview)
	} else {
		r = boundhttp.Fetch(client, req)
	}
	out := output{Result: r}
	if *spillDir != "" {
		out = spill(r, *spillDir, *spillChars, *spillMax)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "fetch:", err)
		return exitFailed
	}
	if out.SpillError != "" {
		fmt.Fprintln(stderr, "fetch: spill:", out.SpillError)
		return exitFailed
	}
	switch r.Status {
	case boundhttp.StatusComplete, boundhttp.StatusPreview:
		return exitComplete
	case boundhttp.StatusHTTPError:
		return exitHTTPError
	case boundhttp.StatusRejected:
		return exitRejected
	}
	return exitFailed
}

// trusting returns the base transport of a Transport (NewBaseTransport, so
// that its bounds stay) that trusts the certificate authorities in the PEM
// file at path instead of the system's: for servers under a private CA.
func trusting(path string) (*http.Transport, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-ca %s: no PEM certificate in it", path)
	}
	base := boundhttp.NewBaseTransport()
	base.TLSClientConfig = &tls.Config{RootCAs: pool}
	return base, nil
}
