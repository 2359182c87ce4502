package property

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// An outcome is what an entry point gave for a case.
type outcome struct {
	ok      bool   // a body accepted whole (for Fetch: Complete)
	body    []byte // the body accepted
	err     error  // the error, if any
	fetch   *boundhttp.Result
	preview bool          // fetch is a Preview: never complete, a prefix of the data
	elapsed time.Duration // a stalled case's time to its verdict
	held    int64         // what the budget held once the body was closed
	panics  any           // a panic's value
	status  int           // the status a server answered (server side)
	answer  []byte
}

// maxText bounds every text a peer can reach an error, a Result or an answer
// with: the library cuts peer text to limits.MaxEcho and its messages are
// short.
const maxText = 4 << 10

// check returns the oracles' verdicts on case c's outcome o: nothing when
// all hold.
func check(c xcase, o outcome) []string {
	var bad []string
	fail := func(f string, a ...any) { bad = append(bad, fmt.Sprintf(f, a...)) }
	if o.panics != nil {
		fail("panicked: %v", o.panics)
		return bad
	}
	want := c.want()
	data := c.data()
	if !c.hasBody() {
		data = nil
	}
	if o.preview {
		return checkPreview(c, o)
	}
	if o.fetch != nil {
		o.ok, o.body = fetchBody(o.fetch)
		switch {
		case o.fetch.Rejection != nil:
			o.err = &limits.Error{Stage: o.fetch.Rejection.Stage}
		case !o.ok:
			o.err = fmt.Errorf("Result %s: %s", o.fetch.Status, o.fetch.Error)
		}
		if j, _ := json.Marshal(o.fetch); !o.ok && len(j) > maxText {
			fail("a Result without a body serialises to %d bytes", len(j))
		}
	}
	switch {
	case want.ok && !o.ok:
		fail("refused (%v), want the body", o.err)
	case want.ok && !bytes.Equal(o.body, data):
		fail("accepted %d bytes that differ from the origin's %d", len(o.body), len(data))
	case !want.ok && o.ok:
		fail("accepted %d bytes, want a refusal at %v", len(o.body), want.stages)
	case !want.ok && len(want.stages) > 0:
		var e *limits.Error
		if !errors.As(o.err, &e) {
			fail("failed with %v, want a *limits.Error at %v", o.err, want.stages)
		} else if !slices.Contains(want.stages, e.Stage) {
			fail("refused at %s (%v), want %v", e.Stage, o.err, want.stages)
		}
	}
	if o.err != nil && len(o.err.Error()) > maxText {
		fail("an error of %d bytes", len(o.err.Error()))
	}
	if len(o.answer) > maxText && !want.ok {
		fail("a refusal answered with %d bytes", len(o.answer))
	}
	if o.held != 0 {
		fail("the budget holds %d once the body is closed", o.held)
	}
	if c.Stop == "stall" && o.elapsed > maxStall {
		fail("a body Timeout of %v ended a stalled peer's body after %v", stallTimeout, o.elapsed)
	}
	return bad
}

// maxStall bounds the time a stalled case may take: its Timeout with a
// margin that holds on a loaded machine (the origin gives up after 30 s).
const maxStall = 10 * time.Second

// fetchBody returns a Result's body and whether it is complete.
func fetchBody(r *boundhttp.Result) (bool, []byte) {
	if !r.Complete {
		return false, nil
	}
	if r.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(r.BodyBase64)
		return err == nil, b
	}
	if r.Body == "" {
		return true, nil
	}
	return true, []byte(r.Body)
}

// quietLog is the servers' error log: aborted handlers are the cases' own.
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// checkPreview is the oracle of a Preview: never complete; a preview's bytes
// are at most previewBytes of the start of the data; a case the model
// refuses at its headers (a coding) is rejected, never previewed.
func checkPreview(c xcase, o outcome) []string {
	var bad []string
	r := o.fetch
	if r.Complete {
		bad = append(bad, fmt.Sprintf("a preview labelled complete (%s)", r.Status))
	}
	want := c.want()
	switch r.Status {
	case boundhttp.StatusPreview:
		b := []byte(r.Body)
		if r.BodyBase64 != "" {
			b, _ = base64.StdEncoding.DecodeString(r.BodyBase64)
		}
		if len(b) > previewBytes || !bytes.HasPrefix(c.data(), b) || !c.hasBody() && len(b) > 0 {
			bad = append(bad, fmt.Sprintf("a preview of %d bytes that is not the start of the data", len(b)))
		}
		if refused := codings[c.Coding].refused; refused != "" && c.hasBody() && !(c.Framing == "length" && len(c.wire()) == 0) {
			bad = append(bad, fmt.Sprintf("a preview of a body the model refuses at %s", refused))
		}
	case boundhttp.StatusRejected:
		if want.ok && c.Size <= previewBytes {
			bad = append(bad, fmt.Sprintf("rejected (%+v), want a preview", r.Rejection))
		}
	}
	if j, _ := json.Marshal(r); len(j) > maxText+2*previewBytes {
		bad = append(bad, fmt.Sprintf("a preview serialises to %d bytes", len(j)))
	}
	if o.held != 0 {
		bad = append(bad, fmt.Sprintf("the budget holds %d once the preview returned", o.held))
	}
	return bad
}
