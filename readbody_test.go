package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestReadBody: ReadBody returns the same bytes as io.ReadAll for every
// kind of body the Transport returns (one chunk, many chunks, streaming,
// after a partial read), leaves the body at its end, and fails after Close.
func TestReadBody(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1, 300, 4 << 10, 200 << 10} {
		data := text(size)
		s := server(t, body{coding: "gzip", data: encode("gzip", data)})
		for _, tt := range []struct {
			name      string
			streaming bool
			skip      int // bytes read with Read before ReadBody
		}{{"whole", false, 0}, {"whole after a partial read", false, 1000}, {"streaming", true, 0}} {
			tr := &boundhttp.Transport{Streaming: tt.streaming}
			resp, err := (&http.Client{Transport: tr}).Get(s.URL)
			if err != nil {
				t.Fatal(err)
			}
			skip := min(tt.skip, size)
			head := make([]byte, skip)
			if _, err := io.ReadFull(resp.Body, head); err != nil {
				t.Fatal(err)
			}
			got, err := boundhttp.ReadBody(resp.Body)
			if err != nil || !bytes.Equal(append(head, got...), data) {
				t.Errorf("%s, %d bytes: ReadBody = %d bytes, %v; want the rest of the body", tt.name, size, len(got), err)
			}
			if n, err := resp.Body.Read(make([]byte, 10)); n != 0 || err != io.EOF {
				t.Errorf("%s, %d bytes: Read after ReadBody = %d, %v; want 0, io.EOF", tt.name, size, n, err)
			}
			resp.Body.Close()
			if got, err := boundhttp.ReadBody(resp.Body); !tt.streaming && (err == nil || len(got) != 0) {
				t.Errorf("%s, %d bytes: ReadBody after Close = %d bytes, %v; want an error", tt.name, size, len(got), err)
			}
			tr.CloseIdleConnections()
		}
	}
}

// TestReadBodyOtherReaders: any other reader is read as io.ReadAll reads it.
func TestReadBodyOtherReaders(t *testing.T) {
	t.Parallel()
	data := text(10000)
	got, err := boundhttp.ReadBody(iotest.OneByteReader(bytes.NewReader(data)))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("ReadBody(one-byte reader) = %d bytes, %v; want %d", len(got), err, len(data))
	}
}

// TestReadBodyInHandler: a handler behind Middleware takes the verified
// request body with ReadBody, and the bytes stay valid after the handler
// returned (the middleware's Close must not recycle what ReadBody handed
// over).
func TestReadBodyInHandler(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 100, 100 << 10} {
		data := text(size)
		kept := make(chan []byte, 1)
		s := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, err := boundhttp.ReadBody(r.Body)
			if err != nil {
				t.Error(err)
			}
			kept <- got
		})))
		req, _ := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(encode("gzip", data)))
		req.Header.Set("Content-Encoding", "gzip")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		s.Close()
		got := <-kept
		// Another request recycles whatever the middleware released.
		s2 := httptest.NewServer(boundhttp.Middleware(limits.Budget{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
		})))
		for range 3 {
			if resp, err := http.Post(s2.URL, "application/json", bytes.NewReader(bytes.Repeat([]byte("x"), size))); err == nil {
				resp.Body.Close()
			}
		}
		s2.Close()
		if !bytes.Equal(got, data) {
			t.Errorf("%d bytes: handler's ReadBody = %d bytes, changed after the handler returned or wrong", size, len(got))
		}
	}
}

// TestReadBodyTwice: a second ReadBody of a whole body returns no bytes and
// no error, as io.ReadAll at the end does, and the first result is intact.
func TestReadBodyTwice(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 300, 200 << 10} {
		data := text(size)
		s := server(t, body{coding: "gzip", data: encode("gzip", data)})
		tr := &boundhttp.Transport{}
		resp, err := (&http.Client{Transport: tr}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		first, err1 := boundhttp.ReadBody(resp.Body)
		second, err2 := boundhttp.ReadBody(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if err1 != nil || !bytes.Equal(first, data) || err2 != nil || len(second) != 0 {
			t.Errorf("%d bytes: ReadBody twice = %d bytes, %v; %d bytes, %v", size, len(first), err1, len(second), err2)
		}
	}
}

// TestReadBodyNoAliasAfterHandOver: the one chunk ReadBody hands over
// leaves the pools: later bodies of the same size class never write into
// it, even when the caller appends to it up to its capacity.
func TestReadBodyNoAliasAfterHandOver(t *testing.T) {
	t.Parallel()
	a, b := bytes.Repeat([]byte("a"), 3000), bytes.Repeat([]byte("b"), 3000)
	sa, sb := server(t, body{data: a}), server(t, body{data: b})
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	get := func(url string) *http.Response {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := get(sa.URL)
	kept, err := boundhttp.ReadBody(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(kept, a) {
		t.Fatalf("ReadBody = %d bytes, %v", len(kept), err)
	}
	kept = append(kept, bytes.Repeat([]byte("k"), cap(kept)-len(kept))...)
	snapshot := bytes.Clone(kept)
	for range 20 {
		r := get(sb.URL)
		got, err := io.ReadAll(r.Body) // Read, then Close: chunks back to the pool
		r.Body.Close()
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("later body = %d bytes, %v: it saw another body's bytes", len(got), err)
		}
	}
	if !bytes.Equal(kept, snapshot) {
		t.Fatal("a later body overwrote the chunk ReadBody handed over")
	}
}

// TestReadBodyStreamingCorrupt: a streaming body that breaks off is never
// returned as whole: ReadBody reports the error.
func TestReadBodyStreamingCorrupt(t *testing.T) {
	t.Parallel()
	enc := encode("gzip", text(100<<10))
	s := server(t, body{coding: "gzip", data: enc[:len(enc)-4]}) // no ISIZE
	tr := &boundhttp.Transport{Streaming: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, err := boundhttp.ReadBody(resp.Body); err == nil || got != nil {
		t.Errorf("ReadBody of a truncated streaming body = %d bytes, %v; want an error and no bytes (whole or nothing)", len(got), err)
	}
}
