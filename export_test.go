package boundhttp

import "time"

// SetDefaultTimeouts shortens the defaults a Transport applies
// (DefaultHeaderTimeout, DefaultBodyTimeout) for a test that proves them
// without waiting a minute, and returns the function that restores them.
// Tests that call it must not run in parallel with others.
func SetDefaultTimeouts(header, body time.Duration) (restore func()) {
	h, b := headerTimeoutDefault.Swap(int64(header)), bodyTimeoutDefault.Swap(int64(body))
	return func() {
		headerTimeoutDefault.Store(h)
		bodyTimeoutDefault.Store(b)
	}
}

// LengthFramed is lengthFramed: whether the Middleware reads r's body as
// framed by its Content-Length, with no decoder.
var LengthFramed = lengthFramed
