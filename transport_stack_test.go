package boundhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// TestStreamingInnerTransportEndIsVerified pins the trap of a Transport
// stacked on a streaming one: the inner Transport hands on its streaming
// body with ContentLength -1 and no Content-Encoding, whatever framed it
// on the wire, and the outer one took an HTTP/1 response without length
// or chunking for a close-delimited body: every body framed by
// Content-Length (identity or gzip) was refused with ErrCloseDelimited,
// though the inner body's io.EOF is a verified end. The outer Transport
// accepts it, verified, in every mode and on the same InFlight or
// another; a body the inner one accepted unverified (close-delimited,
// AllowCloseDelimited) is still refused unless the outer one allows it
// too, and then is reported unverified.
func TestStreamingInnerTransportEndIsVerified(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("boundhttp "), 1000)
	gz := encode("gzip", data)
	url := testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
		if r == nil {
			return
		}
		switch r.URL.Path {
		case "/identity":
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(data), data)
		case "/gzip":
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(gz), gz)
		case "/close-delimited":
			fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n%s", data)
		}
	})
	for _, path := range []string{"/identity", "/gzip", "/close-delimited"} {
		for _, outerStreams := range []bool{false, true} {
			for _, shared := range []bool{false, true} {
				for _, outerAllows := range []bool{false, true} {
					name := path + "/outer streaming " + strconv.FormatBool(outerStreams) +
						"/same InFlight " + strconv.FormatBool(shared) + "/outer allows " + strconv.FormatBool(outerAllows)
					innerF, outerF := limits.NewInFlight(1<<20), limits.NewInFlight(1<<20)
					if shared {
						outerF = innerF
					}
					inner := &boundhttp.Transport{Streaming: true, InFlight: innerF, AllowCloseDelimited: true}
					// The outer budget leaves room in a shared InFlight for the
					// inner body's decoder beside the outer whole body's bound.
					outer := &boundhttp.Transport{Base: inner, Streaming: outerStreams, InFlight: outerF,
						AllowCloseDelimited: outerAllows, Budget: limits.Budget{MaxDecodedBytes: 64 << 10}}
					req, _ := http.NewRequest("GET", url+path, nil)
					resp, err := outer.RoundTrip(req)
					var got []byte
					if err == nil {
						got, err = io.ReadAll(resp.Body)
					}
					unmarked := path == "/close-delimited"
					switch {
					case unmarked && !outerAllows:
						if !errors.Is(err, boundhttp.ErrCloseDelimited) {
							t.Errorf("%s: %v, want ErrCloseDelimited", name, err)
						}
					case err != nil || !bytes.Equal(got, data):
						t.Errorf("%s: %d bytes, %v; want the body", name, len(got), err)
					default:
						if _, verified := boundhttp.UsageOf(resp); verified == unmarked {
							t.Errorf("%s: UsageOf reports verified %v, want %v", name, verified, !unmarked)
						}
					}
					if resp != nil && err == nil {
						resp.Body.Close()
					}
					inner.CloseIdleConnections()
					if innerF.InUse() != 0 || outerF.InUse() != 0 {
						t.Errorf("%s: %d and %d bytes in flight after the fetch", name, innerF.InUse(), outerF.InUse())
					}
				}
			}
		}
	}
}
