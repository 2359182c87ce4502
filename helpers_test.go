package boundhttp_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/boundhttp/boundhttp/internal/testenc"
)

var (
	codings = testenc.Codings
	encode  = testenc.Encode
	text    = testenc.Text
)

var stageOf = testenc.StageOf

var cpuPerOp = testenc.CPUPerOp

// body describes a response a test server sends.
type body struct {
	coding  string // Content-Encoding; "" for none
	data    []byte // the bytes on the wire
	chunked bool   // no Content-Length; flushed in pieces
	status  int
}

// serve writes b: with a Content-Length, or chunked.
func serve(w http.ResponseWriter, b body) {
	if b.coding != "" && b.coding != "identity" {
		w.Header().Set("Content-Encoding", b.coding)
	}
	if !b.chunked {
		w.Header().Set("Content-Length", strconv.Itoa(len(b.data)))
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	if !b.chunked {
		w.Write(b.data)
		return
	}
	f := w.(http.Flusher)
	for p := b.data; len(p) > 0; {
		n := min(len(p), 1000)
		w.Write(p[:n])
		f.Flush()
		p = p[n:]
	}
}

// server returns a test server that answers every request with b.
func server(t *testing.T, b body) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, b) }))
	t.Cleanup(s.Close)
	return s
}

var testencLayered = testenc.Layered
