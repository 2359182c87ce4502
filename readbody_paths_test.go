package boundhttp_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

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

// TestReadBodyClientTimeout: with Client.Timeout, http.Client wraps the
// body; ReadBody falls back to io.ReadAll and still gets the whole body.
func TestReadBodyClientTimeout(t *testing.T) {
	t.Parallel()
	data := text(100 << 10)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	tr := &boundhttp.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: time.Hour}).Get(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, err := boundhttp.ReadBody(resp.Body); err != nil || !bytes.Equal(got, data) {
		t.Errorf("ReadBody of a wrapped body = %d bytes, %v; want %d", len(got), err, len(data))
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

// TestReadBodyLazyRedirect: a redirect kept with http.ErrUseLastResponse
// is read whole through ReadBody; its JSON rejection is an error with no
// bytes.
func TestReadBodyLazyRedirect(t *testing.T) {
	t.Parallel()
	good := []byte(`{"a":[1,2,3]}`)
	deep := bytes.Repeat([]byte("["), 100)
	for _, tt := range []struct {
		name string
		data []byte
		ok   bool
	}{{"valid", good, true}, {"rejected", deep, false}} {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "/elsewhere")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusFound)
			w.Write(tt.data)
		}))
		tr := &boundhttp.Transport{JSON: &limits.JSON{MaxDepth: 10}}
		c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		got, err := boundhttp.ReadBody(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		s.Close()
		if tt.ok && (err != nil || !bytes.Equal(got, good)) || !tt.ok && (err == nil || len(got) != 0) {
			t.Errorf("%s: ReadBody of a kept redirect = %q, %v", tt.name, got, err)
		}
	}
}

// TestReadBodyInFlight: ReadBody hands the body's bytes to the caller, so
// their in-flight charge ends with it; Close then has nothing to give back
// and InUse stays at 0.
func TestReadBodyInFlight(t *testing.T) {
	t.Parallel()
	for _, size := range []int{300, 200 << 10} {
		data := text(size)
		s := server(t, body{coding: "gzip", data: encode("gzip", data)})
		f := limits.NewInFlight(8 << 20)
		tr := &boundhttp.Transport{InFlight: f}
		resp, err := (&http.Client{Transport: tr}).Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		if f.InUse() == 0 {
			t.Errorf("%d bytes: nothing charged before ReadBody", size)
		}
		got, err := boundhttp.ReadBody(resp.Body)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: ReadBody = %d bytes, %v", size, len(got), err)
		}
		if n := f.InUse(); n != 0 {
			t.Errorf("%d bytes: InUse after ReadBody = %d; want 0", size, n)
		}
		resp.Body.Close()
		if n := f.InUse(); n != 0 {
			t.Errorf("%d bytes: InUse after Close = %d; want 0", size, n)
		}
		tr.CloseIdleConnections()
	}
}

// TestReadBodyInFlightHandler: a handler that takes its request body with
// ReadBody (whole, or the rest after a partial Read) ends the body's charge
// there, and nothing is charged once the request is done.
func TestReadBodyInFlightHandler(t *testing.T) {
	t.Parallel()
	for _, size := range []int{300, 200 << 10} {
		for _, skip := range []int{0, 100} {
			data := text(size)
			f := limits.NewInFlight(8 << 20)
			type seen struct {
				before, after int64
				ok            bool
			}
			out := make(chan seen, 1)
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{InFlight: f})
			if err != nil {
				t.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				before := f.InUse()
				head := make([]byte, skip)
				_, err := io.ReadFull(r.Body, head)
				got, err2 := boundhttp.ReadBody(r.Body)
				out <- seen{before, f.InUse(), err == nil && err2 == nil && bytes.Equal(append(head, got...), data)}
			}))
			req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(encode("gzip", data)))
			req.Header.Set("Content-Encoding", "gzip")
			h.ServeHTTP(httptest.NewRecorder(), req)
			s := <-out
			if !s.ok || s.before == 0 || s.after != 0 || f.InUse() != 0 {
				t.Errorf("%d bytes, skip %d: body ok %v, InUse before/after ReadBody %d/%d, after the request %d; want true, >0/0, 0",
					size, skip, s.ok, s.before, s.after, f.InUse())
			}
		}
	}
}

// TestReadBodyConcurrentCloseInFlight: Close from another goroutine during
// ReadBody gives the whole body or an error, and either way the body's
// in-flight charge is given back exactly once.
func TestReadBodyConcurrentCloseInFlight(t *testing.T) {
	t.Parallel()
	data := text(300 << 10)
	s := server(t, body{coding: "gzip", data: encode("gzip", data)})
	f := limits.NewInFlight(8 << 20)
	tr := &boundhttp.Transport{InFlight: f}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for i := range 20 {
		resp, err := c.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			resp.Body.Close()
			close(done)
		}()
		got, err := boundhttp.ReadBody(resp.Body)
		<-done
		if err == nil && !bytes.Equal(got, data) || err != nil && len(got) != 0 {
			t.Fatalf("round %d: ReadBody during Close = %d bytes, %v; want the whole body or an error", i, len(got), err)
		}
		if n := f.InUse(); n != 0 {
			t.Fatalf("round %d: InUse = %d after ReadBody and Close; want 0", i, n)
		}
	}
}
