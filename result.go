package boundhttp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/limits"
)

// A Status classifies a [Result].
type Status string

// The statuses of a Result.
const (
	// StatusComplete: the whole body arrived, decoded and verified, with a
	// 1xx, 2xx or 3xx status.
	StatusComplete Status = "complete"
	// StatusHTTPError: the whole body arrived, decoded and verified, with a
	// 4xx or 5xx status. The body is the server's error document.
	StatusHTTPError Status = "http_error"
	// StatusRejected: the body broke the budget. No body bytes are given.
	StatusRejected Status = "rejected"
	// StatusFailed: the request failed (connection, TLS, protocol, a
	// cancelled context) before a verdict on the body. No body bytes.
	StatusFailed Status = "failed"
	// StatusPreview: at most N decoded bytes, never labelled complete. See
	// [Preview].
	StatusPreview Status = "preview"
	// StatusUnverified: a body within the budget whose end could not be
	// verified, so it may be cut short: a close-delimited body accepted with
	// [Transport.AllowCloseDelimited], or a body that something between the
	// Transport and the caller ended early. Never labelled complete.
	StatusUnverified Status = "unverified"
)

// UnverifiedNotice is the statement every unverified Result carries.
const UnverifiedNotice = "unverified: the end of this body could not be verified (the server ended it by closing the connection, " +
	"with no length and no content-coding that marks its end), so it may be cut short. " +
	"Do not use it for claims about what the document lacks, its length or how it ends."

// PreviewNotice is the statement every preview carries.
const PreviewNotice = "preview: at most the first %d decoded bytes of the body, not verified and possibly cut short. " +
	"Do not use it for claims about the whole document (what it contains or lacks, its length, its conclusions); fetch it whole for that."

// A Result is the outcome of one fetch, shaped for tool adapters: it
// serialises to JSON, keeps budget rejections out of the content channel
// (a rejected or failed Result has no body at all) and tells network and
// HTTP failures apart from rejections.
type Result struct {
	Status Status `json:"status"`
	// Complete reports whether Body is the whole verified body, accepted
	// within the budget: true exactly for the statuses complete and
	// http_error, false for previews, unverified bodies, rejections and
	// failures. It is always present in JSON ("complete": false included).
	Complete bool `json:"complete"`
	// HTTPStatus is the response's status code, when there was a response,
	// also when its body was rejected.
	HTTPStatus int `json:"http_status,omitempty"`
	// URL is the final URL, after redirects, with any password redacted;
	// also set when the body was rejected. After a redirect it is the
	// server's choice, so it is cut to 2048 bytes (and escaped as Error is).
	URL string `json:"url,omitempty"`
	// ContentType is the response's Content-Type, cut to 256 bytes and
	// escaped as Error is (the header is the server's, of any length).
	ContentType string `json:"content_type,omitempty"`
	// Body is the decoded body when it is valid UTF-8. With a
	// Budget.MaxDecodedRunes, Fetch, Preview and ResultOf hold it to that
	// many characters as serialised (see [Result.BodyChars]): a body whose
	// JSON escapes (\u0000 is 6 characters) or base64 form pass the cap is
	// rejected with stage runes, whatever its decoded characters.
	Body string `json:"body,omitempty"`
	// BodyBase64 is the decoded body, base64-encoded, when it is not valid
	// UTF-8.
	BodyBase64 string `json:"body_base64,omitempty"`
	// Usage is what the body cost (for a rejection, what it cost until it
	// was rejected).
	Usage *limits.Usage `json:"usage,omitempty"`
	// Rejection describes a budget rejection.
	Rejection *Rejection `json:"rejection,omitempty"`
	// Error describes a failure (StatusFailed). What net/http quotes of the
	// server's bytes (a malformed status or header line, a redirect
	// target) reaches it cut short and escaped.
	Error string `json:"error,omitempty"`
	// Notice is the preview or unverified statement (StatusPreview,
	// StatusUnverified).
	Notice string `json:"notice,omitempty"`
}

// ResultOf builds the Result of a response and error returned by an
// [http.Client] whose transport is a [Transport], or a RoundTripper chain
// that ends in one, and closes the body. A response that did not come
// through a Transport is a failure: its body would be unbounded, so it is
// not read. Neither is a 101 Switching Protocols, which has no body. A body
// whose end could not be verified is [StatusUnverified], never complete.
func ResultOf(resp *http.Response, err error) Result {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return errorResult(err)
	}
	if resp == nil {
		return Result{Status: StatusFailed, Error: "boundhttp: no response and no error"}
	}
	defer resp.Body.Close()
	c, r := readable(resp)
	if c == nil {
		return r
	}
	data, err := io.ReadAll(resp.Body) // bounded by the Transport, whole or error
	if err != nil {
		r := errorResult(err)
		r.describe(resp)
		return r
	}
	if r, over := overChars(c, resp, data); over {
		return r
	}
	r = Result{Status: StatusComplete, Complete: true}
	if resp.StatusCode >= 400 {
		r.Status = StatusHTTPError
	}
	if u, done := c.Get(); !done || u.DecodedBytes != int64(len(data)) {
		r = Result{Status: StatusUnverified, Notice: UnverifiedNotice}
	}
	r.describe(resp)
	r.setBody(data)
	return r
}

// readable returns the usage record of a response whose body this package
// may read, or nil and the failed Result that says why not.
func readable(resp *http.Response) (*body.Usage, Result) {
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return nil, Result{Status: StatusFailed, HTTPStatus: resp.StatusCode,
			Error: "boundhttp: 101 Switching Protocols: the connection now carries another protocol, not a body; it was not read"}
	}
	c := usageOf(resp)
	if c == nil {
		return nil, Result{Status: StatusFailed, HTTPStatus: resp.StatusCode,
			Error: "boundhttp: the response did not come through a boundhttp.Transport; its body was not read"}
	}
	return c, Result{}
}

func errorResult(err error) Result {
	var r Result
	var le *limits.Error
	if errors.As(err, &le) {
		r = Result{Status: StatusRejected, Rejection: RejectionOf(le)}
	} else {
		r = Result{Status: StatusFailed, Error: failureText(err)}
	}
	var re *ResponseError
	if errors.As(err, &re) {
		r.HTTPStatus, r.URL = re.StatusCode, limits.EchoN(re.URL, maxURL)
		u := re.Usage
		r.Usage = &u
	}
	return r
}

// maxURL is the most bytes of the final URL that a Result keeps: after a
// redirect it is the server's Location, of any length.
const maxURL = 2048

// maxContentType is the most bytes of the response's Content-Type that a
// Result keeps: a header is the peer's and may be megabytes long.
const maxContentType = 256

// failureText returns the text of a failure as a Result may carry it:
// net/http quotes what the peer sent (a malformed status line or header, a
// redirect's Location in the *url.Error), so the URL is cut as
// [limits.Echo] cuts it and the rest goes through the one owner of peer
// text: cut to 256 bytes, every byte outside printable ASCII escaped,
// unless it is a cause this module already bounded.
func failureText(err error) string {
	if ue, ok := err.(*url.Error); ok {
		return ue.Op + ` "` + limits.Echo(ue.URL) + `": ` + peertext.Text(ue.Err)
	}
	return peertext.Text(err)
}

func (r *Result) describe(resp *http.Response) {
	r.HTTPStatus = resp.StatusCode
	r.ContentType = limits.EchoN(resp.Header.Get("Content-Type"), maxContentType)
	if resp.Request != nil && resp.Request.URL != nil {
		r.URL = limits.EchoN(resp.Request.URL.Redacted(), maxURL)
	}
	if c := usageOf(resp); c != nil {
		u, _ := c.Get()
		r.Usage = &u
	}
}

func (r *Result) setBody(data []byte) {
	if utf8.Valid(data) {
		r.Body = string(data)
	} else {
		r.BodyBase64 = base64.StdEncoding.EncodeToString(data)
	}
}

// Fetch sends req with client and returns the Result. The client's
// Transport must be a [*Transport] or a RoundTripper chain that ends in one
// (a logging or retrying wrapper): the response's usage record proves that
// its body came through a Transport, and without one the body is not read
// and the Result is failed. A nil client or request is a failed Result, not
// a default: the caller chooses the budget. Fetch never returns part of a
// body as complete.
func Fetch(client *http.Client, req *http.Request) Result {
	if r, ok := checkArgs("Fetch", client, req); !ok {
		return r
	}
	return ResultOf(client.Do(req))
}

// checkArgs refuses a nil client or request.
func checkArgs(fn string, client *http.Client, req *http.Request) (Result, bool) {
	switch {
	case client == nil:
		return Result{Status: StatusFailed, Error: "boundhttp: " + fn + " needs an http.Client whose Transport is, or wraps, a *boundhttp.Transport; got nil"}, false
	case req == nil:
		return Result{Status: StatusFailed, Error: "boundhttp: " + fn + " of a nil request"}, false
	}
	return Result{}, true
}

// Preview sends req with client (as for [Fetch], a Transport or a chain that
// ends in one) and returns at most n decoded bytes of the body as a Result
// with status preview and Complete false, even when the body ended within
// n bytes: a preview is never evidence about the whole document. It reads
// the body in streaming mode (see [WithStreaming]), no more than it returns
// (plus the decoder's look-ahead), is still charged to the budget, and
// reports a breach within those bytes as a rejection. A partial UTF-8
// character at the end is dropped.
func Preview(client *http.Client, req *http.Request, n int64) Result {
	if r, ok := checkArgs("Preview", client, req); !ok {
		return r
	}
	if n <= 0 {
		return Result{Status: StatusFailed, Error: fmt.Sprintf("boundhttp: Preview of %d bytes", n)}
	}
	resp, err := client.Do(req.WithContext(WithStreaming(req.Context())))
	if err != nil {
		return errorResult(err)
	}
	defer resp.Body.Close()
	c, r := readable(resp)
	if c == nil {
		return r
	}
	// Cutting at n is the point of a preview, so io.LimitReader is right
	// here; the budget still applies underneath it.
	buf, err := io.ReadAll(io.LimitReader(resp.Body, n))
	if err != nil {
		r := errorResult(err)
		r.describe(resp)
		return r
	}
	buf = trimPartialRune(buf)
	if r, over := overChars(c, resp, buf); over {
		return r
	}
	r = Result{Status: StatusPreview, Notice: fmt.Sprintf(PreviewNotice, n)}
	r.describe(resp)
	r.setBody(buf)
	return r
}

// overChars returns the rejection of a body whose serialised form (see
// [Result.BodyChars]) is over the character cap of its budget, and true;
// or false when it fits or there is no cap.
func overChars(c *body.Usage, resp *http.Response, data []byte) (Result, bool) {
	limit := c.CharCap()
	if limit <= 0 {
		return Result{}, false
	}
	n := bodyChars(data)
	if n <= limit {
		return Result{}, false
	}
	r := Result{Status: StatusRejected, Rejection: RejectionOf(charsRejected(n, limit))}
	r.describe(resp)
	return r, true
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of p.
func trimPartialRune(p []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(p); i++ {
		c := p[len(p)-i]
		if c&0xc0 == 0x80 {
			continue // a continuation byte: look further back
		}
		if c >= 0xc0 && !utf8.FullRune(p[len(p)-i:]) {
			return p[:len(p)-i]
		}
		return p
	}
	return p
}
