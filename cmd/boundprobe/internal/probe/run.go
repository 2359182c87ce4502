package probe

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config is one run of the probe. [Main] fills it from the command line.
type Config struct {
	// URL is the one address every request goes to.
	URL string
	// Method of the probe requests; MCP requests are always POST.
	Method string
	// Header is sent with every request (-H).
	Header http.Header
	// ContentType of the probe bodies; a JSON type makes JSON bodies.
	// MCP forces application/json.
	ContentType string
	// MCP opens an MCP session first and checks every tool's largest
	// request against the identity ceiling.
	MCP bool
	// MaxRequests is the most bodies sent by each search (at least 1).
	MaxRequests int
	// Pause is the wait before every probe request but the first.
	Pause time.Duration
	// MaxSize is the largest decoded body size tried, in bytes.
	MaxSize int64
	// Timeout bounds each exchange, from dialling to the answer read.
	Timeout time.Duration
	// Headroom is the fraction [schema.CheckBudget] adds to a tool's
	// largest request before comparing it with the ceiling.
	Headroom float64
}

// Validate reports an error when c cannot be run: a URL that is not http
// or https with a host (or that carries user info), a budget of requests
// below 1, a negative pause or headroom, a timeout that is not positive, a
// MaxSize below the smallest body or above 1 TiB, a method that is not a
// token, an empty Content-Type or one with line breaks, a Header that sets
// a header the probe sets itself (Host, Content-Length, Content-Encoding,
// Content-Type...) or that is not a valid header.
func (c *Config) Validate() error {
	u, err := url.Parse(c.URL)
	if err != nil {
		return err
	}
	min := shape{json: c.MCP || isJSON(c.ContentType)}.minSize()
	switch {
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil:
		return fmt.Errorf("URL %q: want http:// or https://, a host and no user info", c.URL)
	case c.MaxRequests < 1:
		return fmt.Errorf("-max-requests %d: want at least 1", c.MaxRequests)
	case c.Pause < 0:
		return fmt.Errorf("-pause %v: negative", c.Pause)
	case c.Timeout <= 0:
		return fmt.Errorf("-timeout %v: want a positive duration", c.Timeout)
	case c.Headroom < 0:
		return fmt.Errorf("-headroom %v: negative", c.Headroom)
	case c.MaxSize < min || c.MaxSize > maxMaxSize:
		return fmt.Errorf("-max-size %d: want %d to %d bytes", c.MaxSize, min, int64(maxMaxSize))
	case !isToken(c.Method):
		return fmt.Errorf("-X %q: not a method", c.Method)
	case strings.ContainsAny(c.ContentType, "\r\n\x00") || c.ContentType == "":
		return fmt.Errorf("-content-type %q: not a header value", c.ContentType)
	}
	for name, values := range c.Header {
		for _, v := range values {
			if err := checkHeader(name, v); err != nil {
				return fmt.Errorf("-H: %w", err)
			}
		}
	}
	return nil
}

// Run probes the target c describes. The error is c's [Config.Validate]
// error, an [*UnreachableError] or an [*MCPError] when the target could not
// be reached or spoken to, or the context's error.
func Run(ctx context.Context, c Config) (*Report, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return nil, err
	}
	t := &target{url: u, method: c.Method, header: c.Header.Clone(), timeout: c.Timeout}
	if t.header == nil {
		t.header = http.Header{}
	}
	ct := c.ContentType
	if c.MCP {
		ct, t.method = "application/json", http.MethodPost
	}
	t.header.Set("Content-Type", ct)
	rep := &Report{URL: c.URL, Method: t.method, ContentType: ct, Fits: true}

	var mc *mcpClient
	var tools []byte
	if c.MCP {
		mc = &mcpClient{client: newHTTPClient(c.Timeout), url: c.URL, header: c.Header.Clone()}
		if mc.header == nil {
			mc.header = http.Header{}
		}
		defer mc.close(context.WithoutCancel(ctx))
		if err := mc.open(ctx); err != nil {
			return nil, err
		}
		if tools, err = mc.listTools(ctx); err != nil {
			return nil, err
		}
		// The probe bodies go in the session, so that the server reads them.
		for _, k := range []string{"Mcp-Session-Id", "MCP-Protocol-Version"} {
			if v := mc.header.Get(k); v != "" {
				t.header.Set(k, v)
			}
		}
		t.header.Set("Accept", "application/json, text/event-stream")
	}

	sent := 0
	measure := func(s shape) (*Ceiling, error) {
		try := func(ctx context.Context, n int64) (*trial, error) {
			if sent > 0 && c.Pause > 0 {
				if err := sleep(ctx, c.Pause); err != nil {
					return nil, err
				}
			}
			sent++
			b, err := newBody(s, n)
			if err != nil {
				return nil, err
			}
			a, err := t.send(ctx, b)
			if err != nil {
				return nil, err
			}
			return &trial{body: b, answer: a}, nil
		}
		r, err := search(ctx, s.minSize(), c.MaxSize, c.MaxRequests, try)
		if err != nil {
			return nil, err
		}
		return ceilingOf(r, c.MaxSize), nil
	}
	json := isJSON(ct)
	if rep.Identity, err = measure(shape{json: json}); err != nil {
		return nil, err
	}
	if a := rep.Identity.Refusal; rep.Identity.Accepted == nil && a.Outcome != OutcomeAnswered {
		return nil, &UnreachableError{fmt.Errorf("the smallest body got no answer: %s", a.Error)}
	}
	if rep.Gzip, err = measure(shape{json: json, gzip: true}); err != nil {
		return nil, err
	}
	if c.MCP {
		if rep.Tools, err = checkTools(tools, rep.Identity, c.Headroom); err != nil {
			return nil, &MCPError{"tools/list", err}
		}
		rep.Headroom = c.Headroom
		for _, f := range rep.Tools {
			rep.Fits = rep.Fits && f.Fits
		}
	}
	return rep, nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ceilingOf describes the result of a search that tried sizes up to
// maxSize.
func ceilingOf(r *searchResult, maxSize int64) *Ceiling {
	c := &Ceiling{Requests: r.requests, Exact: r.exact()}
	if r.accepted != nil {
		c.Ceiling, c.DecodedCeiling = r.accepted.body.Wire, r.accepted.body.Decoded
		c.Accepted = r.accepted.answer
	}
	if r.refused != nil {
		c.RefusedAt = &Size{Wire: r.refused.body.Wire, Decoded: r.refused.body.Decoded}
		c.Refusal = r.refused.answer
	}
	switch {
	case r.accepted == nil:
		c.Note = fmt.Sprintf("even the smallest body (%d bytes) was refused", r.refused.body.Decoded)
	case r.refused == nil && r.accepted.body.Decoded < maxSize:
		c.Note = fmt.Sprintf("-max-requests ran out before any body was refused: the ceiling is at least %d decoded bytes",
			r.accepted.body.Decoded)
	case r.refused == nil:
		c.Note = "no body up to -max-size was refused: the ceiling is at least this"
	case !c.Exact:
		c.Note = fmt.Sprintf("-max-requests ran out: the ceiling is between %d and %d decoded bytes",
			r.accepted.body.Decoded, r.refused.body.Decoded-1)
	}
	return c
}

// ExitCode returns the exit status of a run that ended with rep and err:
// [ExitUnreachable] for any error (an [*UnreachableError], an [*MCPError],
// the context's), else [ExitNoFit] or [ExitFit].
func ExitCode(rep *Report, err error) int {
	switch {
	case err != nil:
		return ExitUnreachable
	case !rep.Fits:
		return ExitNoFit
	}
	return ExitFit
}

// Exit statuses of the command.
const (
	ExitFit         = 0 // every tool's cap fits the measured ceiling (or no -mcp)
	ExitUsage       = 1 // the command line is wrong
	ExitNoFit       = 3 // a tool's cap does not fit the measured ceiling
	ExitUnreachable = 4 // the target could not be reached or spoken to
)
