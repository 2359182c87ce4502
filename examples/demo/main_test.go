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
	for _, want := range []string{
		"naive decoder: 2097152 bytes",
		"bounded decoder: rejected, stage=decoded limit=65536 observed=65537",
		"normal gzip body of",
		"HTTP client, net/http: 2097152 bytes",
		"HTTP client, boundhttp.Transport: rejected, stage=decoded limit=65536",
		"the handler decoded 2097152 bytes",
		`boundhttp.Middleware: 413, handler called=false, {"type":"urn:boundhttp:problem:decoded"`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
