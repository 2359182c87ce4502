package boundhttp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"unicode/utf8"

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
)

// PreviewNotice is the statement every preview carries.
const PreviewNotice = "preview: at most the first %d decoded bytes of the body, not verified and possibly cut short. " +
	"Do not use it for claims about the whole document (what it contains or lacks, its length, its conclusions); fetch it whole for that."

// A Result is the outcome of one fetch, shaped for tool adapters: it
// serialises to JSON, keeps budget rejections out of the content channel
// (a rejected or failed Result has no body at all) and tells network and
// HTTP failures apart from rejections.
type Result struct {
	Status Status `json:"status"`
	// Accepted reports whether the body was accepted whole (complete and
	// http_error results).
	Accepted bool `json:"accepted"`
	// Complete reports whether Body is the whole verified body. Always false
	// for previews.
	Complete bool `json:"complete"`
	// HTTPStatus is the response's status code, when there was a response.
	HTTPStatus int `json:"http_status,omitempty"`
	// URL is the final URL, after redirects.
	URL string `json:"url,omitempty"`
	// ContentType is the response's Content-Type.
	ContentType string `json:"content_type,omitempty"`
	// Body is the decoded body when it is valid UTF-8.
	Body string `json:"body,omitempty"`
	// BodyBase64 is the decoded body, base64-encoded, when it is not valid
	// UTF-8.
	BodyBase64 string `json:"body_base64,omitempty"`
	// Usage is what the body cost.
	Usage *ResultUsage `json:"usage,omitempty"`
	// Rejection describes a budget rejection.
	Rejection *Rejection `json:"rejection,omitempty"`
	// Error describes a failure (StatusFailed).
	Error string `json:"error,omitempty"`
	// Notice is the preview statement (StatusPreview).
	Notice string `json:"notice,omitempty"`
}

// ResultUsage is [limits.Usage] for JSON.
type ResultUsage struct {
	WireBytes    int64 `json:"wire_bytes"`
	DecodedBytes int64 `json:"decoded_bytes"`
}

// Rejection is a [limits.Error] for JSON: numbers, never content.
type Rejection struct {
	Stage    limits.Stage `json:"stage"`
	Limit    int64        `json:"limit"`
	Observed int64        `json:"observed"`
	Declared bool         `json:"declared,omitempty"`
	Encoding string       `json:"encoding,omitempty"`
	Detail   string       `json:"detail"`
}

// RejectionOf returns the Rejection describing e. Peer-chosen strings
// reach it bounded: Encoding through [limits.Echo], Detail through
// [limits.Error.Error] (which writes the pointer through
// [limits.EchoPointer]).
func RejectionOf(e *limits.Error) *Rejection {
	return &Rejection{Stage: e.Stage, Limit: e.Limit, Observed: e.Observed,
		Declared: e.Declared, Encoding: limits.Echo(e.Encoding), Detail: e.Error()}
}

// ResultOf builds the Result of a response and error returned by an
// [http.Client] whose transport is a [Transport], and closes the body. A
// response that did not come through a Transport is a failure: its body
// would be unbounded, so it is not read.
func ResultOf(resp *http.Response, err error) Result {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return errorResult(err)
	}
	defer resp.Body.Close()
	if cellOf(resp) == nil {
		return Result{Status: StatusFailed, HTTPStatus: resp.StatusCode,
			Error: "boundhttp: the response did not come through a boundhttp.Transport; its body was not read"}
	}
	data, err := io.ReadAll(resp.Body) // bounded by the Transport, whole or error
	if err != nil {
		r := errorResult(err)
		r.HTTPStatus = resp.StatusCode
		return r
	}
	r := Result{Status: StatusComplete, Accepted: true, Complete: true}
	if resp.StatusCode >= 400 {
		r.Status = StatusHTTPError
	}
	r.describe(resp)
	r.setBody(data)
	return r
}

func errorResult(err error) Result {
	var le *limits.Error
	if errors.As(err, &le) {
		return Result{Status: StatusRejected, Rejection: RejectionOf(le)}
	}
	return Result{Status: StatusFailed, Error: err.Error()}
}

func (r *Result) describe(resp *http.Response) {
	r.HTTPStatus = resp.StatusCode
	r.ContentType = resp.Header.Get("Content-Type")
	if resp.Request != nil && resp.Request.URL != nil {
		r.URL = resp.Request.URL.String()
	}
	if c := cellOf(resp); c != nil {
		u, _ := c.get()
		r.Usage = &ResultUsage{WireBytes: u.WireBytes, DecodedBytes: u.DecodedBytes}
	}
}

func (r *Result) setBody(data []byte) {
	if utf8.Valid(data) {
		r.Body = string(data)
	} else {
		r.BodyBase64 = base64.StdEncoding.EncodeToString(data)
	}
}

// Fetch sends req with client, whose Transport must be a [*Transport], and
// returns the Result. It never returns part of a body as complete.
func Fetch(client *http.Client, req *http.Request) Result {
	if _, ok := client.Transport.(*Transport); !ok {
		return Result{Status: StatusFailed, Error: "boundhttp: Fetch needs an http.Client whose Transport is a *boundhttp.Transport"}
	}
	return ResultOf(client.Do(req))
}

type streamKey struct{}

// Preview sends req with client, whose Transport must be a [*Transport],
// and returns at most n decoded bytes of the body as a Result with status
// preview and Complete false, even when the body ended within n bytes: a
// preview is never evidence about the whole document. It reads no more
// than it returns (plus the decoder's look-ahead), is still charged to the
// budget, and reports a breach within those bytes as a rejection. A partial
// UTF-8 character at the end is dropped.
func Preview(client *http.Client, req *http.Request, n int64) Result {
	if _, ok := client.Transport.(*Transport); !ok {
		return Result{Status: StatusFailed, Error: "boundhttp: Preview needs an http.Client whose Transport is a *boundhttp.Transport"}
	}
	if n <= 0 {
		return Result{Status: StatusFailed, Error: fmt.Sprintf("boundhttp: Preview of %d bytes", n)}
	}
	req = req.WithContext(context.WithValue(req.Context(), streamKey{}, true))
	resp, err := client.Do(req)
	if err != nil {
		return errorResult(err)
	}
	defer resp.Body.Close()
	// Cutting at n is the point of a preview, so io.LimitReader is right
	// here; the budget still applies underneath it.
	buf, err := io.ReadAll(io.LimitReader(resp.Body, n))
	if err != nil {
		r := errorResult(err)
		r.HTTPStatus = resp.StatusCode
		return r
	}
	data := trimPartialRune(buf)
	if b, ok := resp.Body.(*bodyReader); ok {
		b.c.set(b.d.Usage(), false) // a preview stops before the end
	}
	r := Result{Status: StatusPreview, Notice: fmt.Sprintf(PreviewNotice, n)}
	r.describe(resp)
	r.setBody(data)
	return r
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

// streamingRequested reports whether Preview asked for a streamed body.
func streamingRequested(ctx context.Context) bool {
	v, _ := ctx.Value(streamKey{}).(bool)
	return v
}
