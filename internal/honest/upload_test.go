package honest

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// Large bodies, each way: 64 MiB (-short), 320 MiB (default), 1 GiB
// (-honest.long) of incompressible bytes over one request, through our
// Transport in streaming mode, against the bare handler and behind a
// streaming Middleware, both with MaxWireBytes and MaxDecodedBytes above
// the size (and, for the upload, a HeaderTimeout that leaves the upload
// its time: the answer's headers come after the whole body). Ours may
// take 3x stock plus 5 s.

// largeSize is the size of the large bodies in the current mode.
func largeSize() int64 { return pick[int64](64<<20, 320<<20, 1<<30) }

// largeWorkload is the setting both directions share.
func largeWorkload(size int64) workload {
	b := limits.Budget{MaxWireBytes: size + 1<<20, MaxDecodedBytes: size + 1<<20}
	return workload{
		protos:        allProtos,
		sides:         []side{ours(noMW, noOuter), ours(streamMW, noOuter)},
		serverBudget:  b,
		clientBudget:  b,
		streaming:     true,
		headerTimeout: pick(5*time.Minute, 10*time.Minute, 30*time.Minute),
		deadline:      pick(5*time.Minute, 10*time.Minute, 30*time.Minute),
		factor:        3,
		slack:         5 * time.Second,
	}
}

// TestLargeUpload: the client sends the body with its Content-Length; the
// handler reads it in blocks of 4 KiB, as a handler that parses as it goes
// does (over HTTP/2 the server then returns flow-control credit in small
// WINDOW_UPDATEs, which the client reads while it uploads), and answers
// with its hash.
func TestLargeUpload(t *testing.T) {
	size := largeSize()
	want := fmt.Sprintf("%d %s", size, payloadSum(11, size))
	w := largeWorkload(size)
	w.pass = func(proto) (http.Handler, func(*env) outcome) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sum := sha256.New()
			n, err := io.CopyBuffer(sum, struct{ io.Reader }{r.Body}, make([]byte, 4<<10))
			if err != nil {
				http.Error(w, fmt.Sprintf("reading the body after %d bytes: %v", n, err), http.StatusInternalServerError)
				return
			}
			fmt.Fprintf(w, "%d %x", n, sum.Sum(nil))
		})
		return h, func(e *env) outcome {
			req, err := http.NewRequestWithContext(e.ctx, "PUT", e.url+"/blob", payload(11, size))
			if err != nil {
				return outcome{err: err}
			}
			req.ContentLength = size
			req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(payload(11, size)), nil }
			req.Header.Set("Content-Type", "application/octet-stream")
			x := e.do(req)
			if x.err == "" && x.head != want {
				x.err = fmt.Sprintf("the handler got %q, want %q", x.head, want)
			}
			return outcome{ex: []exchange{x}}
		}
	}
	w.run(t)
}

// TestLargeDownload: the handler sends the body with its Content-Length;
// the client hashes what it read.
func TestLargeDownload(t *testing.T) {
	size := largeSize()
	want := payloadSum(13, size)
	w := largeWorkload(size)
	w.pass = func(proto) (http.Handler, func(*env) outcome) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
			io.Copy(w, payload(13, size))
		})
		return h, func(e *env) outcome {
			req, err := http.NewRequestWithContext(e.ctx, "GET", e.url+"/blob", nil)
			if err != nil {
				return outcome{err: err}
			}
			x := e.do(req)
			if x.err == "" && (x.n != size || x.sum != want) {
				x.err = fmt.Sprintf("read %d bytes, sha256 %.16s; want %d, %.16s", x.n, x.sum, size, want)
			}
			return outcome{ex: []exchange{x}}
		}
	}
	w.run(t)
}
