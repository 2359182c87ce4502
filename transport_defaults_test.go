package boundhttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// silentPeers are servers that keep a fetch before its response headers:
// no answer at all, headers a byte at a time, 103 Early Hints every 10 ms.
func silentPeers(t *testing.T, done <-chan struct{}) map[string]string {
	wait := func(d time.Duration) bool {
		select {
		case <-done:
			return false
		case <-time.After(d):
			return true
		}
	}
	return map[string]string{
		"silent": testenc.RawServer(t, func(conn net.Conn, r *http.Request) { <-done }),
		"byte-a-time": testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
			for i := range 100000 {
				if !wait(10*time.Millisecond) || conn.SetWriteDeadline(time.Now().Add(time.Second)) != nil {
					return
				}
				const head = "HTTP/1.1 200 OK\r\nX-Slow: a"
				if _, err := fmt.Fprintf(conn, "%c", head[min(i, len(head)-1)]); err != nil {
					return
				}
			}
		}),
		"early-hints": testenc.RawServer(t, func(conn net.Conn, r *http.Request) {
			for range 100000 {
				if !wait(10 * time.Millisecond) {
					return
				}
				if _, err := io.WriteString(conn, "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"); err != nil {
					return
				}
			}
		}),
	}
}

// TestHeaderTimeoutEndsSilentPeer pins the trap of time before the headers
// being bounded by nothing the library sets: the Transport's HeaderTimeout
// (and its default, shortened here) ends a fetch from a server that never
// answers, answers a byte at a time or sends 1xx forever; the error is a
// timeout as net/http callers test for it.
func TestHeaderTimeoutEndsSilentPeer(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	const limit = 300 * time.Millisecond
	for name, url := range silentPeers(t, done) {
		for _, explicit := range []bool{true, false} {
			tr := &boundhttp.Transport{}
			if explicit {
				tr.HeaderTimeout = limit
			} else {
				defer boundhttp.SetDefaultTimeouts(limit, boundhttp.DefaultBodyTimeout)()
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit+20*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			start := time.Now()
			_, err := (&http.Client{Transport: tr}).Do(req)
			took := time.Since(start)
			cancel()
			var ne net.Error
			if !errors.Is(err, boundhttp.ErrHeaderTimeout) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("%s (explicit %v): %v, want ErrHeaderTimeout reporting Timeout", name, explicit, err)
			}
			if took > limit+5*time.Second {
				t.Errorf("%s (explicit %v): took %v, want about %v", name, explicit, took, limit)
			}
			t.Logf("%s (explicit %v): ended after %v: %v", name, explicit, took.Round(time.Millisecond), err)
		}
	}
	if _, err := (&boundhttp.Transport{HeaderTimeout: -1}).RoundTrip(httptestRequest(t)); err == nil || !strings.Contains(err.Error(), "HeaderTimeout") {
		t.Errorf("negative HeaderTimeout: %v, want an error naming it", err)
	}
}

func httptestRequest(t *testing.T) *http.Request {
	req, err := http.NewRequest("GET", "http://127.0.0.1:1/", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestDefaultBodyTimeoutWholeBodyOnly pins the default body time: with
// Budget.Timeout zero a whole-body fetch of a stalled body ends at
// DefaultBodyTimeout (shortened here) with a timeout rejection, and a
// streaming one is left to its caller's context.
func TestDefaultBodyTimeoutWholeBodyOnly(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	defer boundhttp.SetDefaultTimeouts(boundhttp.DefaultHeaderTimeout, 300*time.Millisecond)()
	url := hostile1(t, done)
	_, err := (&http.Client{Transport: &boundhttp.Transport{}}).Get(url)
	var le *limits.Error
	if !errors.As(err, &le) || le.Stage != limits.StageTimeout || le.Limit != 300 {
		t.Errorf("whole-body, Timeout zero: %v, want a timeout rejection at the default (300 ms here)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := (&http.Client{Transport: &boundhttp.Transport{Streaming: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, limits.ErrTimeout) {
		t.Errorf("streaming, Timeout zero: %v, want the caller's deadline, not a default", err)
	}
}

// TestBodyTimeoutIsNetTimeout pins the trap of a Budget timeout that
// net/http-style code cannot see: through http.Client it is a *url.Error
// around a *ResponseError around the *limits.Error, and
// errors.As(err, &netErr) && netErr.Timeout() must hold.
func TestBodyTimeoutIsNetTimeout(t *testing.T) {
	t.Parallel()
	done := make(chan struct{})
	defer close(done)
	url := hostile1(t, done)
	_, err := (&http.Client{Transport: &boundhttp.Transport{Budget: limits.Budget{Timeout: 200 * time.Millisecond}}}).Get(url)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("body timeout through http.Client: %v (%T), want a net.Error whose Timeout is true", err, err)
	}
	var re *boundhttp.ResponseError
	if !errors.As(err, &re) || !re.Timeout() {
		t.Errorf("ResponseError.Timeout of a body timeout: false, want true (%v)", err)
	}
	if (&boundhttp.ResponseError{Err: &limits.Error{Stage: limits.StageDecoded}}).Timeout() {
		t.Errorf("ResponseError.Timeout of a size rejection: true, want false")
	}
}
