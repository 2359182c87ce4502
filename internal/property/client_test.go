package property

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

// sampleSize is how many cases a run generates per side: the flag's, or a
// fixed sample of 3000 (1000 with -short), a fifth of it under the race
// detector.
func sampleSize() int {
	if *casesFlag > 0 {
		return *casesFlag
	}
	n := 3000
	if testing.Short() {
		n /= 3
	}
	if raceEnabled {
		n /= 5
	}
	return n
}

// previewBytes is the n of the preview entry point.
const previewBytes = 100

// A client is a Transport reading from one origin, with its own budget.
type client struct {
	o  *origin
	hc *http.Client
	f  *limits.InFlight
}

func newClient(t *testing.T, proto string) *client {
	o := newOrigin(t, proto)
	base := boundhttp.NewBaseTransport()
	o.speak(base)
	t.Cleanup(base.CloseIdleConnections)
	f := limits.NewInFlight(64 << 20)
	b := budget
	b.Timeout = 20 * time.Second
	return &client{o: o, f: f, hc: &http.Client{Transport: &boundhttp.Transport{Base: base, Budget: b, InFlight: f}}}
}

// TestClientExchangesKeepThePromises generates exchanges over every
// dimension of the model (protocol, method, status, framing,
// Content-Encoding lines, size around the limit, where the origin stops, the
// body's shape, the entry point: whole and streaming RoundTrip, Fetch,
// ReadBody, decoding.ReadAll) and checks the oracles on each.
func TestClientExchangesKeepThePromises(t *testing.T) {
	t.Parallel()
	n := sampleSize()
	clients := map[string]*client{}
	for _, p := range protos {
		clients[p] = newClient(t, p)
	}
	failed := 0
	seen := map[string]int{} // outcomes by kind: the sample must reach each
	var stalled time.Duration
	for i := range n {
		c := generate(*seedFlag, i)
		o := runClient(clients, i, c)
		seen[kindOf(o)]++
		if c.Stop == "stall" {
			seen["stalled"]++
			stalled += o.elapsed
		}
		bad := check(c, o)
		if len(bad) > 0 {
			if failed++; failed <= 20 {
				t.Errorf("case %d of seed %d: %v\n\t%s", i, *seedFlag, c, strings.Join(bad, "\n\t"))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d cases failed (seed %d)", failed, n, *seedFlag)
	}
	for _, k := range []string{"accepted", "refused", "failed", "preview"} {
		if seen[k] == 0 && n >= 200 {
			t.Errorf("no case of %d was %s: the sample proves nothing of it", n, k)
		}
	}
	t.Logf("%d cases, seed %d: %v; the stalled took %v in all", n, *seedFlag, seen, stalled)
}

// kindOf names what an outcome was, for the sample's coverage.
func kindOf(o outcome) string {
	var e *limits.Error
	switch {
	case o.panics != nil:
		return "panic"
	case o.preview && o.fetch.Status == boundhttp.StatusPreview:
		return "preview"
	case o.fetch != nil && o.fetch.Complete, o.fetch == nil && o.ok:
		return "accepted"
	case o.fetch != nil && o.fetch.Rejection != nil, errors.As(o.err, &e):
		return "refused"
	}
	return "failed"
}

// runClient runs case c (number i) through its entry point.
func runClient(clients map[string]*client, i int, c xcase) (o outcome) {
	defer func() {
		if p := recover(); p != nil {
			o.panics = p
		}
	}()
	if c.Entry == "decoding" {
		wire := c.wire()
		f := limits.NewInFlight(64 << 20)
		got, err := decoding.ReadAll(bytes.NewReader(wire), strings.Join(codings[c.Coding].lines, ", "), budget, decoding.WithInFlight(f))
		return outcome{ok: err == nil, body: got, err: err, held: f.InUse()}
	}
	cl := clients[c.Proto]
	cl.o.put(i, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.Entry == "stream" {
		ctx = boundhttp.WithStreaming(ctx)
	}
	if c.Stop == "stall" {
		b := budget
		b.Timeout = stallTimeout
		ctx = boundhttp.WithBudget(ctx, b)
		start := time.Now()
		defer func() { o.elapsed = time.Since(start) }()
	}
	var body io.Reader
	if c.Method == "POST" {
		body = strings.NewReader(`{"q":"a small request"}`)
	}
	req, _ := http.NewRequestWithContext(ctx, c.Method, fmt.Sprintf("%s/c/%d", cl.o.srv.URL, i), body)
	if body != nil {
		// A POST sent on a kept-alive connection the origin has just closed
		// (after a case it cut) is retried by net/http only if it says that
		// it is idempotent.
		req.Header.Set("Idempotency-Key", fmt.Sprint(i))
	}
	switch c.Entry {
	case "fetch":
		r := boundhttp.Fetch(cl.hc, req)
		return outcome{fetch: &r, held: cl.f.InUse()}
	case "preview":
		r := boundhttp.Preview(cl.hc, req, previewBytes)
		return outcome{fetch: &r, preview: true, held: cl.f.InUse()}
	case "resultof":
		r := boundhttp.ResultOf(cl.hc.Do(req))
		return outcome{fetch: &r, held: cl.f.InUse()}
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		return outcome{err: err, held: cl.f.InUse()}
	}
	var got []byte
	if c.Entry == "readbody" {
		got, err = boundhttp.ReadBody(resp.Body)
	} else {
		got, err = io.ReadAll(resp.Body)
	}
	resp.Body.Close()
	return outcome{ok: err == nil, body: got, err: err, held: cl.f.InUse()}
}
