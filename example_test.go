package boundhttp_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/klauspost/compress/gzip"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

func ExampleTransport() {
	// A server whose gzip body is small on the wire and 2 MiB decoded.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zw.Write(bytes.Repeat([]byte("a"), 2<<20))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bomb" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
			return
		}
		io.WriteString(w, "hello, agent")
	}))
	defer srv.Close()

	client := &http.Client{Transport: &boundhttp.Transport{
		Budget: limits.Budget{MaxWireBytes: 64 << 10, MaxDecodedBytes: 64 << 10},
	}}

	resp, err := client.Get(srv.URL + "/hello")
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	usage, _ := boundhttp.UsageOf(resp)
	fmt.Printf("%s (%d decoded bytes)\n", body, usage.DecodedBytes)

	_, err = client.Get(srv.URL + "/bomb")
	var le *limits.Error
	if errors.As(err, &le) {
		fmt.Printf("rejected: stage=%s limit=%d observed=%d too large=%v\n",
			le.Stage, le.Limit, le.Observed, errors.Is(err, limits.ErrTooLarge))
	}
	// Output:
	// hello, agent (12 decoded bytes)
	// rejected: stage=decoded limit=65536 observed=65537 too large=true
}
