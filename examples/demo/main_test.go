package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatalf("run() = %v\n%s", err, out.String())
	}
	s := out.String()
	if n := strings.Count(s, "naive net/http client: 2097152 bytes decoded"); n != 4 {
		t.Errorf("naive client decoded 2 MiB for %d codings, want 4:\n%s", n, s)
	}
	if n := strings.Count(s, "boundhttp.Transport: rejected, stage=decoded limit=65536 observed=65537"); n != 4 {
		t.Errorf("Transport rejected %d codings, want 4:\n%s", n, s)
	}
	for _, want := range []string{
		"gzip bomb: testdata/gzip-bomb-2MiB.gz\n",
		"gzip: a 2068-byte response",
		"compressed-size check of 65536 bytes passes: true",
		"the handler decoded 2097152 bytes",
		`boundhttp.Middleware: 413, handler called=false, {"type":"urn:boundhttp:problem:decoded"`,
		"normal gzip response: accepted",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("demo output lacks %q:\n%s", want, s)
		}
	}
}
