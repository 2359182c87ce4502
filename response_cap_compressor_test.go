package boundhttp_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/klauspost/compress/gzhttp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// capped returns the Middleware with a response cap of max bytes.
func capped(t *testing.T, max int64) func(http.Handler) http.Handler {
	t.Helper()
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: limits.Budget{}, MaxResponseBytes: max})
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// getGzip fetches url asking for gzip and returns the status (0 if no
// response came), the decoded body and the error that ended its read.
func getGzip(t *testing.T, url string) (int, []byte, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return resp.StatusCode, raw, err
	}
	zr, zerr := gzip.NewReader(bytes.NewReader(raw))
	if zerr != nil {
		return resp.StatusCode, nil, zerr
	}
	data, _ := io.ReadAll(zr)
	return resp.StatusCode, data, err
}

// TestResponseCapCountsCompressorInside pins which bytes the cap counts
// with a compressor between it and the handler (mw(gzhttp(h))): the
// compressed bytes, as the doc says. 1 MiB of zeros compresses to about
// 1 KiB and passes a 64 KiB cap whole.
func TestResponseCapCountsCompressorInside(t *testing.T) {
	t.Parallel()
	zeros := make([]byte, 1<<20)
	s := httptest.NewServer(capped(t, 64<<10)(gzhttp.GzipHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(zeros)
	}))))
	defer s.Close()
	status, data, err := getGzip(t, s.URL)
	if status != 200 || err != nil || !bytes.Equal(data, zeros) {
		t.Errorf("compressor inside the cap, 1 MiB of zeros under 64 KiB: %d, %d bytes, %v; want 200 and all (the cap counts compressed bytes)", status, len(data), err)
	}
}

// TestResponseCapBreachBehindCompressorAnswers pins the trap of a
// compressor outside the cap (gzhttp(mw(h))): the cap counts the handler's
// bytes, and after a first write over its 4 KiB hold the compressor still
// buffers everything, so an abort left the client with no status line at
// all (a bare EOF, 502 behind nginx). The client must get the status and
// a body that is visibly cut, never a clean end.
func TestResponseCapBreachBehindCompressorAnswers(t *testing.T) {
	t.Parallel()
	s := httptest.NewServer(gzhttp.GzipHandler(capped(t, 64<<10)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(text(5 << 10))
		w.Write(text(100 << 10)) // over the cap
	}))))
	defer s.Close()
	status, data, err := getGzip(t, s.URL)
	if status == 0 || err == nil {
		t.Errorf("breach behind a compressor: status %d, %d bytes, error %v; want a status line and then a read error (cut body)", status, len(data), err)
	}
	if len(data) > 5<<10 {
		t.Errorf("breach behind a compressor: %d bytes reached the client, want at most the 5 KiB written before the breach", len(data))
	}
}
