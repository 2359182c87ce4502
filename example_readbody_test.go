package boundhttp_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/boundhttp/boundhttp"
)

func ExampleReadBody() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"ok":true}`)
	}))
	defer srv.Close()

	client := &http.Client{Transport: &boundhttp.Transport{}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	// The body was verified before Get returned; ReadBody takes it without
	// io.ReadAll's copies.
	data, err := boundhttp.ReadBody(resp.Body)
	fmt.Println(string(data), err)
	// Output: {"ok":true} <nil>
}
