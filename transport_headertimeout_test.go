package boundhttp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
)

// TestRaisedHeaderTimeoutNotCutByBase pins the trap of a second, hidden
// header clock: HeaderTimeout is documented as the time to the response
// headers, to be raised for slow servers, but a base transport with its own
// ResponseHeaderTimeout (NewBaseTransport's was the 30 s default) cut a
// response that came after it and before HeaderTimeout, with net/http's
// error instead of ErrHeaderTimeout. The default is shortened here; a
// server that answers after it, well within the raised HeaderTimeout, must
// be answered, over HTTP/1.1 with a nil Base and over HTTP/2 with
// NewBaseTransport as Base.
func TestRaisedHeaderTimeoutNotCutByBase(t *testing.T) {
	const short, raised = 200 * time.Millisecond, 20 * time.Second
	defer boundhttp.SetDefaultTimeouts(short, boundhttp.DefaultBodyTimeout)()
	late := func() <-chan time.Time { return time.After(3 * short) } // the server is slow, by design
	h1 := testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
		<-late()
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	})
	h2, pool := testenc.H2Server(t, true, func(c *testenc.H2Conn) {
		id, err := c.NextRequest()
		if err != nil {
			return
		}
		<-late()
		c.Headers(id, false, ":status", "200", "content-length", "2")
		c.Data(id, []byte("ok"), 0, true)
		io.Copy(io.Discard, c) // until the client closes
	})
	for name, tr := range map[string]*boundhttp.Transport{
		"http1/nil Base":              {HeaderTimeout: raised},
		"h2/NewBaseTransport as Base": {HeaderTimeout: raised, Base: testenc.H2Client(boundhttp.NewBaseTransport(), pool)},
	} {
		url := h1
		if tr.Base != nil {
			url = h2
		}
		ctx, cancel := context.WithTimeout(context.Background(), raised)
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Errorf("%s: %v, want the response that came within HeaderTimeout (%v)", name, err, raised)
		} else {
			resp.Body.Close()
		}
		cancel()
		tr.CloseIdleConnections()
	}
}
