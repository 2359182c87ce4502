package boundhttp

import (
	"context"
	"io"
	"net/http"

	"github.com/boundhttp/boundhttp/internal/body"
	"github.com/boundhttp/boundhttp/limits"
)

// adopt takes over the body of resp when the Base is another Transport
// (or hands on one of its bodies) on the same InFlight: a whole body it
// read and verified is not read, decoded or charged again, which on one
// InFlight would wait for room that only that body's charge could free.
// Only what this Transport holds stricter applies (see [body.Body.Adopt]);
// an unverified body (a close-delimited one the Base accepted) is refused
// unless AllowCloseDelimited is set here too. It reports false for any
// other body, which RoundTrip then reads as usual; rb is this request's
// body, whose usage record the caller may find through the request.
func (t *Transport) adopt(cfg *body.Config, b limits.Budget, resp *http.Response, rb *body.Body,
	cancel context.CancelFunc) (bool, error) {
	ib, ok := resp.Body.(*body.Body)
	if !ok || !ib.SameInFlight(cfg) {
		return false, nil
	}
	ok, e := ib.Adopt(cfg, b, cfg.JSON != nil && isJSON(resp.Header.Get("Content-Type")))
	if !ok {
		return false, nil
	}
	cancel() // the body was read whole: no connection or deadline of this request is left
	u, verified := ib.Usage().Get()
	if e == nil && !verified && !t.AllowCloseDelimited {
		e = &limits.Error{Stage: limits.StageIntegrity, Err: ErrCloseDelimited}
	}
	rb.Usage().Set(u, verified)
	if e != nil {
		ib.Close()
		return true, refused(resp, rb.Usage(), e)
	}
	if c := b.MaxDecodedRunes; c > 0 && (ib.Usage().CharCap() == 0 || c < ib.Usage().CharCap()) {
		ib.Usage().SetCharCap(c)
	}
	return true, nil
}

// verifiedByBase reports whether rc, a response body under the request's
// guard, is the body of a Base that is itself a Transport and ends only at
// a verified end. Such a Transport hands a streaming body on with
// ContentLength -1 and no Content-Encoding, whatever framed it on the
// wire: on HTTP/1 that looks like a close-delimited body, and is not one.
// A body the Base accepted unverified (close-delimited, with its
// AllowCloseDelimited) is close-delimited here too.
func verifiedByBase(rc io.ReadCloser) bool {
	if g, ok := rc.(*connBody); ok {
		rc = g.ReadCloser
	}
	ib, ok := rc.(*body.Body)
	return ok && ib.EndVerified()
}
