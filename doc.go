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
// response after, never a cut that looks complete.
//
// Rejections are [*limits.Error] values carrying the stage, the limit, the
// observed bytes and the coding; they never carry body content.
package boundhttp
