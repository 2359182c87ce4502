// Command demo shows what boundhttp is for: small bodies that pass a
// compressed-size check expand to megabytes in a naive decoder, and are
// rejected by the bounded one with the stage and the limit that tripped.
//
// It runs offline: every body is made here, and the HTTP part uses
// loopback servers.
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
	"github.com/klauspost/compress/zstd"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/limits"
)

const (
	bombSize     = 2 << 20  // 2 MiB of one letter
	sizeCheck    = 64 << 10 // a compressed-size check many tools rely on
	decodedLimit = 64 << 10
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	run := bytes.Repeat([]byte("a"), bombSize)
	budget := limits.Budget{MaxWireBytes: sizeCheck, MaxDecodedBytes: decodedLimit}
	fmt.Fprintf(w, "budget: wire %d bytes, decoded %d bytes\n\n", budget.MaxWireBytes, budget.MaxDecodedBytes)
	for _, c := range []string{"gzip", "br", "zstd"} {
		body, err := compress(c, run)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: a %d-byte body\n", c, len(body))
		fmt.Fprintf(w, "  compressed-size check (%d bytes): passes=%v\n", sizeCheck, len(body) <= sizeCheck)
		n, err := naiveDecode(c, body)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  naive decoder: %d bytes\n", n)
		_, err = decoding.ReadAll(bytes.NewReader(body), c, budget)
		var e *limits.Error
		if !errors.As(err, &e) {
			return fmt.Errorf("%s bomb: bounded decoder returned %v, want a *limits.Error", c, err)
		}
		fmt.Fprintf(w, "  bounded decoder: rejected, stage=%s limit=%d observed=%d (%v)\n\n", e.Stage, e.Limit, e.Observed, errors.Is(err, limits.ErrTooLarge))
	}
	if err := overHTTP(w, run, budget); err != nil {
		return err
	}
	normal := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	body, err := compress("gzip", normal)
	if err != nil {
		return err
	}
	got, err := decoding.ReadAll(bytes.NewReader(body), "gzip", budget)
	if err != nil {
		return fmt.Errorf("normal body rejected: %v", err)
	}
	fmt.Fprintf(w, "normal gzip body of %d bytes: accepted, %d bytes decoded\n", len(body), len(got))
	return nil
}

func compress(coding string, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	var zw io.WriteCloser
	switch coding {
	case "gzip":
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
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

// overHTTP shows the same gzip bomb through a real client and server on a
// loopback port: Go's own transport decodes it whole, boundhttp.Transport
// rejects it; a handler behind http.MaxBytesHandler decodes it whole, one
// behind boundhttp.Middleware is never called.
func overHTTP(w io.Writer, data []byte, budget limits.Budget) error {
	bomb, err := compress("gzip", data)
	if err != nil {
		return err
	}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Encoding", "gzip")
		rw.Write(bomb)
	}))
	defer srv.Close()

	resp, err := srv.Client().Get(srv.URL) // stock transport, transparent gzip
	if err != nil {
		return err
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	fmt.Fprintf(w, "HTTP client, net/http: %d bytes from a %d-byte gzip response\n", n, len(bomb))
	client := &http.Client{Transport: &boundhttp.Transport{Budget: budget}}
	_, err = client.Get(srv.URL)
	var e *limits.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("boundhttp.Transport returned %v, want a *limits.Error", err)
	}
	fmt.Fprintf(w, "HTTP client, boundhttp.Transport: rejected, stage=%s limit=%d\n", e.Stage, e.Limit)

	var decoded int64
	naive := http.MaxBytesHandler(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		zr, err := gzip.NewReader(r.Body)
		if err == nil {
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
			fmt.Fprintf(w, "HTTP server, http.MaxBytesHandler(%d): the handler decoded %d bytes\n", budget.MaxWireBytes, decoded)
		} else {
			fmt.Fprintf(w, "HTTP server, boundhttp.Middleware: %d, handler called=%v, %s", resp.StatusCode, called, answer)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// naiveDecode decodes as most code does: no limit at all.
func naiveDecode(coding string, body []byte) (int64, error) {
	var r io.Reader
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		defer zr.Close()
		r = zr
	}
	return io.Copy(io.Discard, r)
}
