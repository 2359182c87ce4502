// Command boundprobe measures the request body ceiling that a deployed HTTP
// path really enforces (the smallest of a proxy's, a framework's and
// boundhttp's limits), for identity and gzip bodies, by bisection with a
// bounded number of requests, and reports who answered each refusal. With
// -mcp it lists the endpoint's tools and checks that each tool's largest
// request fits the measured ceiling.
//
// It sends traffic only to the URL it is given.
//
//	go install github.com/boundhttp/boundhttp/cmd/boundprobe@latest
//	boundprobe -mcp -pause 0 http://127.0.0.1:8080/mcp
//
// Run boundprobe -h for the flags; the command's internal package
// (cmd/boundprobe/internal/probe, doc.go) documents what is sent, what
// counts as accepted and what the gzip search measures.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/boundhttp/boundhttp/cmd/boundprobe/internal/probe"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := probe.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
