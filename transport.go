package boundhttp

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// DefaultAcceptEncoding is the Accept-Encoding a [Transport] sends when
// neither it nor the request sets one: every coding it can bound. deflate
// comes last with a low weight because servers that send raw DEFLATE under
// that name exist, and such bodies are rejected (see package decoding).
const DefaultAcceptEncoding = "zstd, br, gzip, deflate;q=0.5"

// A Transport is an [http.RoundTripper] that hands callers only complete,
// verified, in-budget response bodies.
//
// It asks for the content-codings it can bound, decodes whatever coding a
// response declares and charges the body against the budget (see
// [limits.Budget] for each limit). A coding it cannot decode fails closed
// with [limits.StageEncoding]; the base transport never decodes on its own.
//
// In whole-body mode (the default) RoundTrip returns only after the body was
// read, decoded and verified, and a breach is an error from RoundTrip (which
// [http.Client] wraps in a *url.Error that still matches
// errors.As(err, **limits.Error)); the response is then not returned. The
// returned Body serves the complete decoded bytes from pooled memory that
// Close gives back (reads after Close fail); Content-Encoding and
// Content-Length are removed from the header, ContentLength is the decoded
// length and Uncompressed is true when a coding was removed.
//
// In streaming mode Body is a bounded decoding reader: a breach is a sticky
// [*limits.Error] from Read, io.EOF comes only after the verified end, and
// ContentLength is -1.
//
// Every response with a body is charged, 4xx and 5xx included. Responses
// that carry no body (HEAD, 1xx, 204, 304) pass unchanged. Redirects (301,
// 302, 303, 307, 308 with a Location) are always streamed, so the 2 KiB that
// http.Client reads before following one cost a small bounded read, never a
// full decode. Server-sent event streams (text/event-stream, as MCP's
// streamable HTTP uses) are always streamed too, since they have no end to
// wait for; their total is still charged to the budget. A 206 response with a content-coding is rejected with
// [limits.StageEncoding]: a byte range of an encoded representation cannot
// be decoded on its own; when a request has a Range header and no
// Accept-Encoding, the Transport asks for identity.
//
// A rejected body is closed without reading it further, so its connection is
// not reused.
//
// The zero value is usable: the default budget, whole-body mode, and a
// private clone of [http.DefaultTransport] with DisableCompression set. A
// Transport is safe for concurrent use; its fields must not change after
// first use.
type Transport struct {
	// Base carries the requests. Nil means a private clone of
	// http.DefaultTransport with DisableCompression set; neither
	// http.DefaultTransport nor a Base handed in is modified. A Base must
	// not decode bodies itself: the Transport always sets Accept-Encoding,
	// which keeps http.Transport's transparent gzip off.
	Base http.RoundTripper

	// Budget is charged by every response body, unless the request's
	// context carries another one (see [WithBudget]).
	Budget limits.Budget

	// Streaming selects streaming mode instead of whole-body mode.
	Streaming bool

	// AcceptEncoding is sent on requests that do not set Accept-Encoding
	// themselves. Empty means [DefaultAcceptEncoding]. A request's own
	// Accept-Encoding is never replaced.
	AcceptEncoding string

	// DecodeOptions are passed to the decoder of every body, for example
	// decoding.WithMaxMembers.
	DecodeOptions []decoding.Option

	// JSON, if set, holds the shape of every JSON response body
	// (application/json, text/json, */*+json) to these limits, after
	// decoding and before the caller sees it: a breach is a *limits.Error of
	// stage json, a syntax error one of stage integrity. In streaming mode
	// the check runs as the body is read. Nil means no shape check.
	JSON *limits.JSON

	// InFlight, if set, is the process-wide budget every response body is
	// charged to, with the Middlewares and Readers that share it: decoder
	// state before it is allocated, and in whole-body mode the body, held
	// from its first byte until the caller closes the returned Body (see
	// [limits.InFlight] and [decoding.WithInFlight]). A body that finds no
	// room waits until the request's context is done (or Budget.Timeout
	// elapses), then fails with a [*limits.Error] of stage inflight that
	// wraps the context's error; a body that could never fit fails at
	// once. Close every Body, or its charge is never given back. A caller
	// that holds one body while it fetches another through the same
	// InFlight should give that fetch a deadline (see [limits.InFlight]).
	// Nil means none.
	InFlight *limits.InFlight

	once sync.Once
	base http.RoundTripper
}

func (t *Transport) baseTransport() http.RoundTripper {
	t.once.Do(func() {
		if t.Base != nil {
			t.base = t.Base
			return
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableCompression = true
		t.base = tr
	})
	return t.base
}

// CloseIdleConnections closes the idle connections of the base transport,
// if it has such a method.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.baseTransport().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip sends req and returns its response with the body charged
// against the budget. It does not modify req.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	b := t.Budget
	if rb, ok := BudgetFrom(req.Context()); ok {
		b = rb
	}
	if err := b.Validate(); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	if t.JSON != nil {
		if err := t.JSON.Validate(); err != nil {
			closeRequestBody(req)
			return nil, err
		}
	}
	b = b.WithDefaults()

	ctx, cancel := context.WithCancel(req.Context())
	cell := new(usageCell)
	out := req.WithContext(withUsageCell(ctx, cell)) // a shallow copy
	if req.Header.Get("Accept-Encoding") == "" {
		out.Header = req.Header.Clone()
		if out.Header == nil {
			out.Header = make(http.Header)
		}
		switch {
		case req.Header.Get("Range") != "":
			out.Header.Set("Accept-Encoding", "identity")
		case t.AcceptEncoding != "":
			out.Header.Set("Accept-Encoding", t.AcceptEncoding)
		default:
			out.Header.Set("Accept-Encoding", DefaultAcceptEncoding)
		}
	}
	resp, err := t.baseTransport().RoundTrip(out)
	if err != nil {
		cancel()
		return nil, err
	}
	if !hasBody(req, resp) {
		cancel()
		cell.set(limits.Usage{}, true)
		return resp, nil
	}
	fail := func(err error) (*http.Response, error) {
		cancel() // the connection is closed, not drained
		resp.Body.Close()
		return nil, err
	}
	if err := b.CheckContentLength(resp.ContentLength); err != nil {
		return fail(err)
	}
	ce := strings.Join(resp.Header.Values("Content-Encoding"), ",")
	coded := len(decoding.ParseContentEncoding(ce)) > 0
	if resp.StatusCode == http.StatusPartialContent && coded {
		return fail(&limits.Error{Stage: limits.StageEncoding, Encoding: ce, Err: errPartialCoded})
	}
	d, err := decoding.NewReader(resp.Body, ce, b, t.decodeOptions()...)
	if err != nil {
		return fail(err)
	}
	t.inflightBody(d, ctx)
	body := &bodyReader{d: d, src: resp.Body, c: cell, cancel: cancel}
	if b.Timeout > 0 {
		body.startTimer(b.Timeout)
	}
	if coded {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.Uncompressed = true
	}
	checkJSON := t.JSON != nil && isJSON(resp.Header.Get("Content-Type"))
	if t.Streaming || isRedirect(resp) || isEventStream(resp) || streamingRequested(req.Context()) {
		resp.ContentLength = -1
		resp.Body = body
		if checkJSON {
			jc, _ := decoding.NewJSONChecker(*t.JSON) // validated above
			resp.Body = &jsonCheckReader{ReadCloser: body, c: jc}
		}
		return resp, nil
	}
	if !coded {
		d.SetSizeHint(resp.ContentLength)
	}
	chunks, err := body.readAll()
	body.Close()
	if err == nil && checkJSON {
		err = checkJSONChunks(chunks, *t.JSON)
	}
	if err != nil {
		chunks.Release()
		return nil, err
	}
	full := newFullBody(chunks, cell) // its Close gives back the chunks' charge
	resp.Body = full
	resp.ContentLength = full.size
	return resp, nil
}

var errPartialCoded = errors.New("boundhttp: 206 Partial Content with a content-coding cannot be decoded")

// hasBody reports whether resp can carry a body.
func hasBody(req *http.Request, resp *http.Response) bool {
	switch {
	case req.Method == http.MethodHead,
		resp.StatusCode >= 100 && resp.StatusCode < 200,
		resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusNotModified,
		resp.Body == nil, resp.Body == http.NoBody:
		return false
	}
	return true
}

// isEventStream reports whether resp is a server-sent event stream, which
// has no end to wait for.
func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "text/event-stream"
}

// isRedirect reports whether http.Client would follow resp.
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case 301, 302, 303, 307, 308:
		return resp.Header.Get("Location") != ""
	}
	return false
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}
