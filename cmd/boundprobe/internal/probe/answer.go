package probe

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"

	"github.com/boundhttp/boundhttp/limits"
)

// Outcomes of one exchange.
const (
	OutcomeAnswered = "answered" // a response arrived
	OutcomeReset    = "reset"    // the connection was reset before a response arrived
	OutcomeClosed   = "closed"   // the connection was closed before a response arrived
	OutcomeTimeout  = "timeout"  // no response within -timeout
	OutcomeError    = "error"    // any other failure after the connection was made
)

// Who answered a refusal.
const (
	ByBoundhttp   = "boundhttp"    // a boundhttp problem document (stage, limit, observed)
	ByProblemJSON = "problem+json" // another RFC 9457 application/problem+json document
	ByOther       = "other"        // anything else (an HTML page, plain text, an empty body)
)

// An Answer describes what came back for one body. Every string in it that
// the peer chose has passed through [limits.Echo]: bounded, escaped.
type Answer struct {
	// Outcome is one of the Outcome constants.
	Outcome string `json:"outcome"`
	// By is one of the By constants; empty when no response arrived.
	By string `json:"by,omitempty"`
	// Status is the response's status code.
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// Server is the Server header.
	Server string `json:"server,omitempty"`
	// Title is the first line of an HTML <title>, or a problem's title.
	Title string `json:"title,omitempty"`
	// Type is a problem document's type.
	Type string `json:"type,omitempty"`
	// Stage, Limit and Observed are a boundhttp problem document's.
	Stage    string `json:"stage,omitempty"`
	Limit    *int64 `json:"limit,omitempty"`
	Observed *int64 `json:"observed,omitempty"`
	// Sent is the number of request bytes (header and body) written to the
	// connection before the exchange ended.
	Sent int64 `json:"sent_bytes"`
	// Error is the failure when no response arrived, or the failure to
	// write the rest of the body (a server that answered early and closed).
	Error string `json:"error,omitempty"`
}

// Refused reports whether the body was refused: no response, a 413 or 415,
// or a boundhttp problem document of a size stage. Everything else got
// through the size limits of the path.
func (a *Answer) Refused() bool {
	if a.Outcome != OutcomeAnswered {
		return true
	}
	if a.Status == http.StatusRequestEntityTooLarge || a.Status == http.StatusUnsupportedMediaType {
		return true
	}
	return a.By == ByBoundhttp && limits.Stage(a.Stage).Sentinel() == limits.ErrTooLarge
}

// maxAnswerBody is the most bytes of a response body read to classify it.
const maxAnswerBody = 64 << 10

// classify fills a from the response resp and the bytes of its body (nil
// when they could not be read whole within maxAnswerBody).
func (a *Answer) classify(resp *http.Response, body []byte) {
	a.Outcome = OutcomeAnswered
	a.Status = resp.StatusCode
	a.ContentType = limits.Echo(resp.Header.Get("Content-Type"))
	a.Server = limits.Echo(resp.Header.Get("Server"))
	a.By = ByOther
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "application/problem+json":
		a.By = ByProblemJSON
		var p struct {
			Type     string          `json:"type"`
			Title    string          `json:"title"`
			Stage    string          `json:"stage"`
			Limit    json.RawMessage `json:"limit"`
			Observed json.RawMessage `json:"observed"`
		}
		if json.Unmarshal(body, &p) != nil {
			return
		}
		a.Type, a.Title = limits.Echo(p.Type), limits.Echo(p.Title)
		if !strings.HasPrefix(p.Type, "urn:boundhttp:problem:") || p.Stage == "" {
			return
		}
		a.By, a.Stage = ByBoundhttp, limits.Echo(p.Stage)
		a.Limit, a.Observed = intOf(p.Limit), intOf(p.Observed)
	case "text/html":
		a.Title = htmlTitle(body)
	}
}

// intOf returns the integer in raw, or nil.
func intOf(raw json.RawMessage) *int64 {
	var n int64
	if json.Unmarshal(raw, &n) != nil {
		return nil
	}
	return &n
}

// htmlTitle returns the first line of the <title> element of page, echoed.
func htmlTitle(page []byte) string {
	lower := bytes.ToLower(page)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	rest := page[i+j+1:]
	if k := bytes.Index(bytes.ToLower(rest), []byte("</title")); k >= 0 {
		rest = rest[:k]
	}
	rest = bytes.TrimSpace(rest)
	if k := bytes.IndexAny(rest, "\r\n"); k >= 0 {
		rest = rest[:k]
	}
	return limits.Echo(string(bytes.TrimSpace(rest)))
}

// outcomeOf classifies the error that ended an exchange without a response.
func outcomeOf(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return OutcomeReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return OutcomeClosed
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return OutcomeTimeout
	}
	return OutcomeError
}
