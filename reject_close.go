package boundhttp

import (
	"net/http"
)

// maxUnwrap bounds the walk down a chain of wrapped ResponseWriters.
const maxUnwrap = 16

// closeAfterRejection makes a rejected exchange end so that the answer
// reaches the client although body bytes may still be unread.
//
// On HTTP/1 the connection must close (the unread remainder is not drained),
// and it must close the way [http.MaxBytesReader] makes net/http close it:
// the server flushes the answer, half-closes and lingers before the full
// close (closeWriteAndWait). A plain close with unread bytes makes the kernel
// answer the peer's next segment with a reset that destroys the answer in
// flight: nginx then reports 502 and a client still writing sees a broken
// pipe. net/http lingers only when its unexported requestTooLarge was called
// on the response, and the one way to call it is a MaxBytesReader whose limit
// is hit: so a zero-byte MaxBytesReader over a source that always has one
// byte is read once for the writer and for every writer it wraps (via
// Unwrap, as [http.ResponseController] does). The request body itself is not
// read, so no "100 Continue" is sent for a body refused on its declared
// size.
//
// On HTTP/2 and later, Connection: close would make the server send GOAWAY
// and fail every stream multiplexed on the connection: nothing is done, and
// the server resets only this stream when the handler returns with its body
// unread.
func closeAfterRejection(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor >= 2 {
		return
	}
	w.Header().Set("Connection", "close")
	var p [1]byte
	for range maxUnwrap {
		http.MaxBytesReader(w, oneByte{}, 0).Read(p[:])
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// oneByte is a source that always has one more byte.
type oneByte struct{}

func (oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = 0
	return 1, nil
}

func (oneByte) Close() error { return nil }
