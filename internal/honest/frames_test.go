package honest

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
)

// Many tiny frames from honest peers: a body sent one byte at a time, each
// byte flushed on its own (an HTTP/1.1 chunk, or an HTTP/2 DATA frame, of
// one byte; over TLS a record each). 16 KiB (-short), 64 KiB (default),
// 256 KiB (-honest.long).

func tinySize() int { return pick(16<<10, 64<<10, 256<<10) }

// tiny checks that the workload did what it says: n body bytes took at
// least 5 socket bytes each (a chunk of one byte is 6, a DATA frame 10).
func tiny(socket int64, n int) error {
	if socket < 5*int64(n) {
		return fmt.Errorf("the workload is not what it claims: %d socket bytes for %d body bytes, not one byte per chunk or frame", socket, n)
	}
	return nil
}

// TestOneByteFlushes (client side): the handler writes and flushes its
// answer one byte at a time, and sends its hash in a trailer. Our
// Transport reads it whole (the default budget holds it) and streaming;
// the trailer must reach the caller as it does with stock.
func TestOneByteFlushes(t *testing.T) {
	data := text(3, tinySize())
	want := sumOf(data)
	pass := func(proto) (http.Handler, func(*env) outcome) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.Header().Set("Trailer", "X-Body-Sha256")
			rc := http.NewResponseController(w)
			for i := range data {
				if _, err := w.Write(data[i : i+1]); err != nil {
					return
				}
				if err := rc.Flush(); err != nil {
					return
				}
			}
			w.Header().Set("X-Body-Sha256", want)
		})
		return h, func(e *env) outcome {
			req, err := http.NewRequestWithContext(e.ctx, "GET", e.url+"/feed", nil)
			if err != nil {
				return outcome{err: err}
			}
			resp, err := e.client.Do(req)
			if err != nil {
				return outcome{ex: []exchange{{err: e.clean(err.Error())}}}
			}
			x := readAnswer(resp, e.clean)
			resp.Body.Close()
			x.extra = "trailer " + resp.Trailer.Get("X-Body-Sha256")
			if x.err == "" && x.sum != want {
				x.err = fmt.Sprintf("read %d bytes, sha256 %.16s; want %d, %.16s", x.n, x.sum, len(data), want)
			}
			if x.err == "" && resp.Trailer.Get("X-Body-Sha256") != want {
				x.err = fmt.Sprintf("trailer X-Body-Sha256 %q, want %q", resp.Trailer.Get("X-Body-Sha256"), want)
			}
			_, read := writesOf(e.base).socketBytes()
			return outcome{ex: []exchange{x}, err: tiny(read, len(data)),
				notes: []string{fmt.Sprintf("the client read %d socket bytes for %d body bytes", read, len(data))}}
		}
	}
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			w := workload{protos: allProtos, sides: clientOnly, streaming: streaming, tuneBase: measureWrites, pass: pass}
			w.run(t)
		})
	}
}

// TestOneByteChunks (server side): the client sends its request body one
// byte per Read and so, with no length declared, one byte per chunk
// (HTTP/1.1 flushes each chunk) or DATA frame (HTTP/2); the handler reads
// it behind the Middleware, whole and streaming, and answers with its
// hash.
func TestOneByteChunks(t *testing.T) {
	data := text(4, tinySize())
	want := fmt.Sprintf("%d %s", len(data), sumOf(data))
	w := workload{
		protos:   allProtos,
		sides:    bothModes,
		tuneBase: measureWrites,
		pass: func(proto) (http.Handler, func(*env) outcome) {
			return http.HandlerFunc(hashAnswer), func(e *env) outcome {
				req, err := http.NewRequestWithContext(e.ctx, "POST", e.url+"/ingest", oneByteReader{bytes.NewReader(data)})
				if err != nil {
					return outcome{err: err}
				}
				req.Header.Set("Content-Type", "application/x-ndjson")
				x := e.do(req)
				if x.err == "" && x.head != want {
					x.err = fmt.Sprintf("the handler got %q, want %q", x.head, want)
				}
				written, _ := writesOf(e.base).socketBytes()
				return outcome{ex: []exchange{x}, err: tiny(written, len(data)),
					notes: []string{fmt.Sprintf("the client wrote %d socket bytes for %d body bytes", written, len(data))}}
			}
		},
	}
	w.run(t)
}
