package boundhttp

import (
	"errors"
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
)

// A ResponseError is the error [Transport.RoundTrip] returns when it
// refuses a response it received: a body that broke the budget (Err is then
// a [*limits.Error]), or a protocol error such as an unrequested 101
// Switching Protocols. It records which response was refused, so that a
// rejected 200 can be told from a rejected 503; the response itself is not
// returned and none of its body is kept.
//
// errors.As(err, **limits.Error) and errors.Is with the limits sentinels
// see through it to Err. Its text is Err's text.
type ResponseError struct {
	// StatusCode is the refused response's HTTP status code.
	StatusCode int
	// URL is the URL of the request the response answered, with any
	// password redacted.
	URL string
	// Usage is what the body cost before it was refused.
	Usage limits.Usage
	// Err is why the response was refused.
	Err error
}

func (e *ResponseError) Error() string { return e.Err.Error() }

// Timeout reports whether the response was refused because a deadline
// passed: Err, or an error it wraps, has a Timeout method that reports
// true (a [*limits.Error] of [limits.StageTimeout] has). It lets code
// written for net/http's timeouts, which asks a *url.Error and through it
// its direct cause, recognise a body timeout.
func (e *ResponseError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.Err, &t) && t.Timeout()
}

// Unwrap returns Err.
func (e *ResponseError) Unwrap() error { return e.Err }

// refused returns the error that refuses resp because of err.
func refused(resp *http.Response, c *body.Usage, err error) error {
	e := &ResponseError{StatusCode: resp.StatusCode, Err: err}
	if resp.Request != nil && resp.Request.URL != nil {
		e.URL = resp.Request.URL.Redacted()
	}
	if c != nil {
		e.Usage, _ = c.Get()
	}
	return e
}
