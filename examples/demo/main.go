// Command demo shows what boundhttp is for: small bodies that pass a
// compressed-size check expand to megabytes in a naive client or handler,
// and are rejected whole by the bounded ones, with the stage and the limit
// that tripped.
//
// It runs offline: every body is served on loopback; the gzip bomb is the
// repository's testdata/gzip-bomb-2MiB.gz (see gzipBomb), the others are
// made here.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

const (
	bombSize  = 2 << 20  // 2 MiB of one letter
	sizeCheck = 64 << 10 // a compressed-size check many tools rely on
)

// budget is the bounded side's: 64 KiB on the wire, 64 KiB decoded.
var budget = limits.Budget{MaxWireBytes: sizeCheck, MaxDecodedBytes: 64 << 10}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	data := bytes.Repeat([]byte("a"), bombSize)
	fmt.Fprintf(w, "budget: wire %d bytes, decoded %d bytes\n\n", budget.MaxWireBytes, budget.MaxDecodedBytes)
	client := &http.Client{Transport: &boundhttp.Transport{Budget: budget}}
	bomb, from, err := gzipBomb(data)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "gzip bomb: %s\n\n", from)
	for _, coding := range []string{"gzip", "deflate", "br", "zstd"} {
		body, err := compress(coding, data)
		if coding == "gzip" {
			body = bomb
		}
		if err != nil {
			return err
		}
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Encoding", coding)
			rw.Write(body)
		}))
		fmt.Fprintf(w, "%s: a %d-byte response (compressed-size check of %d bytes passes: %v)\n", coding, len(body), sizeCheck, len(body) <= sizeCheck)
		n, err := naiveFetch(srv.URL, coding)
		if err != nil {
			srv.Close()
			return err
		}
		fmt.Fprintf(w, "  naive net/http client: %d bytes decoded\n", n)
		_, err = client.Get(srv.URL)
		srv.Close()
		var e *limits.Error
		if !errors.As(err, &e) {
			return fmt.Errorf("%s: boundhttp.Transport returned %v, want a *limits.Error", coding, err)
		}
		fmt.Fprintf(w, "  boundhttp.Transport: rejected, stage=%s limit=%d observed=%d\n\n", e.Stage, e.Limit, e.Observed)
	}
	if err := server(w, bomb); err != nil {
		return err
	}
	if err := normal(w, client); err != nil {
		return err
	}
	_, _, _, err = inflight(w)
	return err
}

// naiveFetch fetches url as most fetch tools do: net/http's own transport
// (which decodes gzip by itself) and, for other codings, the decoder with
// no limit.
func naiveFetch(url, coding string) (int64, error) {
	req, _ := http.NewRequest("GET", url, nil)
	if coding != "gzip" {
		req.Header.Set("Accept-Encoding", coding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	switch resp.Header.Get("Content-Encoding") {
	case "deflate":
		if r, err = zlib.NewReader(resp.Body); err != nil {
			return 0, err
		}
	case "br":
		r = brotli.NewReader(resp.Body)
	case "zstd":
		zr, err := zstd.NewReader(resp.Body)
		if err != nil {
			return 0, err
		}
		defer zr.Close()
		r = zr
	}
	return io.Copy(io.Discard, r)
}

// server posts the gzip bomb to a handler behind http.MaxBytesHandler, which
// decodes it whole, and to one behind boundhttp.Middleware, which is never
// called.
func server(w io.Writer, bomb []byte) error {
	var decoded int64
	naive := http.MaxBytesHandler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if zr, err := gzip.NewReader(r.Body); err == nil {
			decoded, _ = io.Copy(io.Discard, zr)
		}
	}), budget.MaxWireBytes)
	called := false
	bounded := boundhttp.Middleware(budget)(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		called = true
	}))
	for i, h := range []http.Handler{naive, bounded} {
		s := httptest.NewServer(h)
		req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(bomb))
		req.Header.Set("Content-Encoding", "gzip")
		resp, err := s.Client().Do(req)
		if err != nil {
			s.Close()
			return err
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		s.Close()
		if i == 0 {
			fmt.Fprintf(w, "server, http.MaxBytesHandler(%d): the handler decoded %d bytes of a %d-byte gzip request\n", budget.MaxWireBytes, decoded, len(bomb))
		} else {
			fmt.Fprintf(w, "server, boundhttp.Middleware: %d, handler called=%v, %s\n", resp.StatusCode, called, answer)
		}
	}
	return nil
}

// normal shows an ordinary body accepted whole.
func normal(w io.Writer, client *http.Client) error {
	doc := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	body, err := compress("gzip", doc)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Encoding", "gzip")
		rw.Write(body)
	}))
	defer srv.Close()
	resp, err := client.Get(srv.URL)
	if err != nil {
		return fmt.Errorf("normal body rejected: %v", err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	u, _ := boundhttp.UsageOf(resp)
	fmt.Fprintf(w, "normal gzip response: accepted, %d bytes on the wire, %d decoded: %s\n", u.WireBytes, len(got), got)
	return nil
}

func compress(coding string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	var zw io.WriteCloser
	switch coding {
	case "gzip":
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
	case "deflate":
		zw, _ = zlib.NewWriterLevel(&buf, zlib.BestCompression)
	case "br":
		zw = brotli.NewWriterLevel(&buf, brotli.BestCompression)
	case "zstd":
		var err error
		if zw, err = zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression)); err != nil {
			return nil, err
		}
	}
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
