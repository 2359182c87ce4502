// Package probe measures the request body ceiling that a deployed HTTP path
// really enforces: the smallest of every limit on the way (a reverse proxy's
// client_max_body_size, a framework's default, boundhttp's Middleware). It is
// the engine of the boundprobe command; [Main] is the command itself.
//
// # What is sent
//
// Every request goes to the one URL given, over HTTP/1.1 on a new connection
// (no proxy from the environment, no redirect followed, no keep-alive), with
// a Content-Length. Bodies are generated, never read from disk. With a JSON
// content type (the default, and always with -mcp) a body of N bytes is a
// valid JSON document of exactly N bytes, an MCP notification that
// cancels a request that does not exist, which servers ignore:
//
//	{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"boundprobe-no-such-request","reason":"aaaa…"}}
//
// so that a JSON syntax check never refuses it; otherwise it is N bytes of
// "a".
//
// # Accepted and refused
//
// A body is refused when no answer arrived (the connection was reset or
// closed, or the exchange timed out), when the answer is 413 or 415, or when
// it is a boundhttp problem document of a size stage. Any other answer
// (2xx, but also 400 from a validation of the padding, 401, 404, 500) means
// the body got through every size limit on the path, and counts as
// accepted; the answer at the ceiling is reported, so a path that answers
// everything with 401 is visible as such.
//
// # The search
//
// Sizes are bracketed first, from the smallest body up in powers of four
// from 1 KiB (1 KiB, 4 KiB, … 1 MiB, 4 MiB, … up to -max-size), then the
// bracket is bisected to the byte. With the defaults (-max-size 64 MiB,
// -max-requests 40) every ceiling is found exactly: a ceiling c needs about
// log4(c/1024)+3 bracketing requests and log2(3c/4) bisection steps: 29
// requests for 1 MiB, 32 for 4 MiB, at most 36 below 64 MiB. When the budget
// runs out first, the result is an interval (ceiling accepted, refused_at
// refused, exact false).
//
// # gzip
//
// The gzip search bisects on the decoded size: a body of D decoded bytes
// (the same document as above, very compressible) is gzip-compressed,
// deterministically, and sent with its wire size as Content-Length. Its
// result names both sizes of the largest accepted body: ceiling (wire bytes)
// and decoded_ceiling. Since the padding compresses about 1000:1, a gzip body
// passes a proxy's wire limit long before it meets a decoded limit: this
// search finds the decoded ceiling (boundhttp's MaxDecodedBytes, a
// framework's limit on what it reads after decoding), and the wire ceiling
// it reports is what carried that decoded size, not the largest gzip body
// the proxy would pass (that is the identity ceiling).
package probe
