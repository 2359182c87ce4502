// Package limits holds the byte-budget model of boundhttp: the [Budget] that
// configures every bounded body, the [Stage] at which a body is charged, the
// typed [Error] a breach produces and the [Usage] a body actually cost.
//
// The package does no I/O. Package decoding enforces a Budget on a stream;
// the root package boundhttp enforces it on HTTP clients and servers.
//
// Every limit is exact: a body of exactly N bytes passes a limit of N, and
// N+1 fails. A zero field means the documented default; a negative field is
// invalid. No field means "unlimited": the byte limits always apply, and the
// fields whose default is "off" (MaxRatio, MaxDecodedRunes, Timeout) add a
// check on top of them.
package limits
