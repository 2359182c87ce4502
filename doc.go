// Package boundhttp puts hard byte budgets on HTTP bodies in both
// directions.
//
// [Transport] is an [http.RoundTripper] for clients: it asks for the
// content-codings it can bound, decodes them against a [limits.Budget] and
// hands the caller only complete, verified, in-budget bodies (or, in
// streaming mode, a reader whose breaches are sticky typed errors).
// [Middleware] charges request bodies on the server against the same budget,
// with the same stages, errors and boundary: exactly N bytes pass, N+1 fail.
// With [MiddlewareConfig].MaxResponseBytes it also caps what handlers write
// (stage [limits.StageResponse]): a 500 before anything was sent, an aborted
// response after, never a cut that looks complete; [ResponseCap] is that cap
// on its own, without a request-body budget.
//
// Rejections are [*limits.Error] values carrying the stage, the limit, the
// observed bytes and the coding; they never carry body content. On the
// client they come wrapped in a [*ResponseError] that also names the
// refused response's status and URL.
//
// # What the client verifies, and who chooses
//
// Whole-body mode is the default and streaming is the caller's choice alone:
// [Transport.Streaming], [WithStreaming] for one request, or a request that
// asked for a server-sent event stream (Accept: text/event-stream) and got
// one. Nothing a server sends switches modes: an unrequested event stream is
// read whole, and a redirect's body is verified whole when first read (a
// caller that stops at a redirect gets a verified body or an error; a body
// http.Client discards while following costs at most one decode within the
// budget, and nothing when it has no content-coding and declares a length
// over 2 KiB, since http.Client then closes it unread).
//
// Some bodies cannot be verified at all, and none of them is presented as
// complete. A close-delimited body (HTTP/1.x with neither Content-Length nor
// chunked framing) ends when the server closes the connection, which looks
// exactly like a connection cut mid-body; unless a content-coding with its
// own end marker covers it (one gzip member or zstd frame, a brotli or zlib
// stream), it is rejected with [limits.StageIntegrity] and
// [ErrCloseDelimited], or, with [Transport.AllowCloseDelimited], accepted
// but reported unverified by [UsageOf] and as [StatusUnverified] by
// [ResultOf]. A 101 Switching Protocols hands over a connection, not a body:
// it is an error unless the request asked to upgrade, and even then nothing
// in this package reads it.
//
// [limits.Budget.Timeout] runs, on the client, from the arrival of the
// response headers to the verified end of the body, so a server that stalls
// before the first body byte is cut off as well.
//
// Bodies may be closed from another goroutine while a Read is in progress:
// the Read is aborted and fails, and the body's pooled decoder and buffers
// are released only after it has returned.
package boundhttp
