package boundhttp_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestHostileFramingThroughFetch walks framings a hostile server can send,
// byte for byte over raw TCP, through Fetch: interim 1xx responses before
// the real one, trailers, a chunked body whose last chunk never ends, a
// gzip body cut inside its chunk framing, Content-Encoding "identity" and
// repeated codings. A body is either complete and byte-exact or has no body
// bytes in its Result at all.
func TestHostileFramingThroughFetch(t *testing.T) {
	t.Parallel()
	gz := encode("gzip", text(5000))
	chunked := func(data []byte, end string) string {
		var b bytes.Buffer
		for len(data) > 0 {
			n := min(len(data), 1000)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, data[:n])
			data = data[n:]
		}
		return b.String() + end
	}
	cases := []struct {
		name     string
		resp     string
		complete bool
	}{
		{"100 and 103 before the answer", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n" +
			"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + fmt.Sprint(len(gz)) + "\r\n\r\n" + string(gz), true},
		{"chunked gzip with trailers", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n" +
			chunked(gz, "0\r\nX-T: done\r\n\r\n"), true},
		{"last chunk never ends", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(text(5000), "0\r\n"), false},
		{"gzip cut inside the chunk framing", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
			chunked(gz, "")[:len(chunked(gz, ""))-2], false},
		{"identity named", "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 5000\r\n\r\n" + string(text(5000)), true},
		{"gzip on two header lines over one gzip layer", "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Encoding: gzip\r\nContent-Length: " +
			fmt.Sprint(len(gz)) + "\r\n\r\n" + string(gz), false},
	}
	for _, tc := range cases {
		url := rawConnServer(t, func(c net.Conn, _ *http.Request) { io.WriteString(c, tc.resp) })
		tr := &boundhttp.Transport{Budget: limits.Budget{MaxDecodedBytes: 10000}}
		req, _ := http.NewRequest("GET", url, nil)
		res := boundhttp.Fetch(&http.Client{Transport: tr}, req)
		tr.CloseIdleConnections()
		switch {
		case tc.complete && (res.Status != boundhttp.StatusComplete || res.Body != string(text(5000))):
			t.Errorf("%s: %s, %d body bytes (%s %+v); want complete and byte-exact", tc.name, res.Status, len(res.Body), res.Error, res.Rejection)
		case !tc.complete && (res.Complete || res.Body != "" || res.BodyBase64 != ""):
			t.Errorf("%s: %s with %d body bytes; want no body", tc.name, res.Status, len(res.Body)+len(res.BodyBase64))
		}
	}
}
