package boundhttp

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// ErrCloseDelimited is the cause (Err) of the [limits.StageIntegrity]
// rejection of a close-delimited body: an HTTP/1.x response with neither a
// Content-Length nor chunked framing, and no content-coding that marks its
// own end, ends only when the server closes the connection, and that end
// cannot be told from a connection cut short. See
// [Transport.AllowCloseDelimited].
var ErrCloseDelimited = errors.New("boundhttp: close-delimited body: its end cannot be verified")

// errUnrequestedSwitch refuses a 101 Switching Protocols answer to a request
// that did not ask to upgrade.
var errUnrequestedSwitch = errors.New("boundhttp: 101 Switching Protocols to a request that did not ask to upgrade")

var errPartialCoded = errors.New("boundhttp: 206 Partial Content with a content-coding cannot be decoded")

// hasBody reports whether resp can carry a body. A declared length of 0
// is no body whatever the codings, over every protocol: net/http's HTTP/1
// client gives it http.NoBody, its HTTP/2 client only when the headers
// ended the stream.
func hasBody(req *http.Request, resp *http.Response) bool {
	switch {
	case req.Method == http.MethodHead,
		resp.StatusCode >= 100 && resp.StatusCode < 200,
		resp.StatusCode == http.StatusNoContent,
		resp.StatusCode == http.StatusNotModified,
		resp.ContentLength == 0,
		resp.Body == nil, resp.Body == http.NoBody:
		return false
	}
	return true
}

// asksUpgrade reports whether h asks to switch protocols: an Upgrade header
// and the "upgrade" token in Connection (RFC 9110 7.8).
func asksUpgrade(h http.Header) bool {
	return h.Get("Upgrade") != "" && hasToken(h.Values("Connection"), "upgrade")
}

// hasToken reports whether the comma-separated header values name token.
func hasToken(values []string, token string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// closeDelimited reports whether resp is an HTTP/1.x body framed only by
// the end of the connection.
func closeDelimited(resp *http.Response) bool {
	return resp.ProtoMajor == 1 && resp.ContentLength < 0 && len(resp.TransferEncoding) == 0
}

// streams reports whether the caller chose streaming mode for req: the
// Transport's Streaming field, [WithStreaming] on the request's context, or
// a request that asked for an event stream (Accept: text/event-stream) and
// got one. Nothing else in the response (a status, a redirect, a
// Content-Type the request did not ask for) selects streaming.
func (t *Transport) streams(req *http.Request, resp *http.Response) bool {
	return t.Streaming || StreamingFrom(req.Context()) ||
		isEventStream(resp) && acceptsEventStream(req.Header)
}

// isEventStream reports whether resp is a server-sent event stream.
func isEventStream(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	if !containsFold(ct, "event-stream") {
		// mime.ParseMediaType (a map per call) cannot find the type:
		// it lowercases the type, and only ASCII letters lowercase to
		// the letters of "event-stream".
		return false
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt == "text/event-stream"
}

// containsFold reports whether s contains sub, ASCII letters matched
// without regard to case (and whatever else [strings.EqualFold] matches).
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// acceptsEventStream reports whether h's Accept names text/event-stream
// itself (not through a wildcard) with a weight above zero.
func acceptsEventStream(h http.Header) bool {
	for _, v := range h.Values("Accept") {
		for r := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(r)
			if err != nil || mt != "text/event-stream" {
				continue
			}
			if q, ok := params["q"]; ok {
				if w, err := strconv.ParseFloat(q, 64); err != nil || w <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// isRedirect reports whether http.Client may follow resp.
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case 301, 302, 303, 307, 308:
		return resp.Header.Get("Location") != ""
	}
	return false
}
