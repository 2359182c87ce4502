package property

import (
	"strings"
	"testing"
)

// regressions are the generated cases that failed once, named after the
// trap each found, with the seed and index that found it. Each runs on
// every test run, with the fix's test in the root package.
var regressions = []struct {
	name string
	c    xcase
}{
	// TestCloseDelimitedCodedBodyWithNoBytesIsACut (seed 1, case 483).
	{"close-delimited coded body with no bytes is a cut", xcase{Proto: "h1tls", Method: "POST", Status: 500,
		Framing: "close", Coding: codingIndex("br"), Size: 256 * limit, Stop: "after-headers", Shape: "zeros", Entry: "fetch"}},
	{"close-delimited stack with no bytes is a cut", xcase{Proto: "h1", Method: "GET", Status: 500,
		Framing: "close", Coding: codingIndex("gzip, br"), Size: limit, Stop: "after-headers", Shape: "random", Entry: "whole"}},
	// TestZeroLengthIsNoBodyOnEveryProtocol (seed 1, case 2982).
	{"zero length is no body over HTTP/2", xcase{Proto: "h2c", Method: "GET", Status: 500,
		Framing: "length", Coding: codingIndex("x-unknown"), Size: 0, Stop: "trailing", Shape: "text", Entry: "stream"}},
	{"zero length then a reset stream is no body", xcase{Proto: "h2tls", Method: "GET", Status: 206,
		Framing: "length", Coding: codingIndex("x-unknown"), Size: 0, Stop: "mid-body", Shape: "zeros", Entry: "readbody"}},
}

// codingIndex returns the index of the coding whose header lines join to
// lines.
func codingIndex(lines string) int {
	for i, c := range codings {
		if strings.Join(c.lines, " | ") == lines {
			return i
		}
	}
	panic("no coding " + lines)
}

func TestGeneratedRegressions(t *testing.T) {
	t.Parallel()
	clients := map[string]*client{}
	for _, p := range protos {
		clients[p] = newClient(t, p)
	}
	for i, r := range regressions {
		if bad := check(r.c, runClient(clients, i, r.c.normal())); len(bad) > 0 {
			t.Errorf("%s: %v\n\t%s", r.name, r.c, strings.Join(bad, "\n\t"))
		}
	}
}

// serverRegressions are the server cases that failed once.
var serverRegressions = []struct {
	name string
	c    scase
}{
	// TestZeroLengthRequestIsNoBodyOnEveryProtocol (server side, seed 1).
	{"zero length request is no body over HTTP/2", scase{xcase: xcase{Proto: "h2c", Method: "POST", Status: 200,
		Framing: "length", Coding: codingIndex("x-unknown"), Size: 0, Stop: "complete", Shape: "zeros", Entry: "middleware"},
		Wrap: "timeout-handler", State: "busy"}},
}

func TestGeneratedServerRegressions(t *testing.T) {
	t.Parallel()
	servers := map[string]*server{}
	for _, p := range protos {
		servers[p] = newServer(t, p)
	}
	for _, r := range serverRegressions {
		if bad := checkServer(r.c, runServer(servers[r.c.Proto], r.c)); len(bad) > 0 {
			t.Errorf("%s: %v\n\t%s", r.name, r.c, strings.Join(bad, "\n\t"))
		}
	}
}
