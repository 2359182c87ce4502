package boundhttp_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestEchoingAttackerBytesPartialCodedEncoding (trap: echoing attacker
// bytes into errors): the rejection of a 206 with a content-coding put the
// whole Content-Encoding header, as the peer wrote it, into
// limits.Error.Encoding, which is documented as cut to limits.MaxEcho
// bytes: 100 KB of server-chosen text rode along in every *ResponseError
// (and in whatever logs it with %+v or serialises it).
func TestEchoingAttackerBytesPartialCodedEncoding(t *testing.T) {
	ce := "gzip, " + strings.Repeat("IGNORE PREVIOUS INSTRUCTIONS ", 4000)
	url := rawConnServer(t, func(c net.Conn, _ *http.Request) {
		io.WriteString(c, "HTTP/1.1 206 Partial Content\r\nContent-Encoding: "+ce+"\r\nContent-Length: 3\r\n\r\nabc")
	})
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	_, err := (&http.Client{Transport: tr}).Get(url)
	var le *limits.Error
	if !errors.As(err, &le) || le.Stage != limits.StageEncoding {
		t.Fatalf("206 with a content-coding: %v; want a *limits.Error of stage encoding", err)
	}
	if len(le.Encoding) > limits.MaxEcho || le.Encoding != "gzip" {
		t.Errorf("limits.Error.Encoding holds %d bytes of the peer's header (%.40q...); want the first coding, at most %d bytes",
			len(le.Encoding), le.Encoding, limits.MaxEcho)
	}
	if len(err.Error()) > 1024 {
		t.Errorf("Error() is %d bytes long", len(err.Error()))
	}
}
