// Package property tests the library's promises as properties over a
// generated space of exchanges rather than as instances: every case is a
// point of the model's dimensions (the protocol, the status, the method,
// the framing, the Content-Encoding lines, the body's size against the
// limit, where the peer stops, and the entry point that reads it), and
// every case is checked against the oracles, stated once (oracle_test.go):
// a body reported complete equals the origin's decoded bytes and its end
// was proven; a case the model rejects is rejected, at the stage the model
// names, and reaches a server's client as that stage's status; every text
// a peer chose reaches an error bounded; every charge returns to 0; nothing
// panics.
//
// The package has tests only. The default run checks a fixed-seed sample
// of 3000 cases per side (about 5 s on two cores; a fifth of it under the
// race detector, a third of that with -short); the long run explores as
// many cases as asked from a seed:
//
//	go test ./internal/property -property.cases 100000 -property.seed 1 -timeout 2h
//
// A failing case prints its seed, its index and its description; once
// fixed it is kept, by hand, as a named regression test in regress_test.go.
package property
