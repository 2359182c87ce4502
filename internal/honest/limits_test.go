package honest

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

// limitN is the size every boundary below is set to: bodies of exactly
// limitN bytes are honest traffic at the limit, limitN+1 one step past it.
const limitN = 256 << 10

// TestDefencesAtTheirLimits runs each byte bound at its limit and one step
// past it, over the four protocols: at the limit ours serves the same
// status and bytes as stock net/http (the honest workload right up to the
// defence), one byte past it ours stops it with the defence's stage and
// status (what stock, which has no such defence, lets through). The
// defences: the request body's wire and decoded bounds (Middleware, whole
// and streaming), the response body's wire and decoded bounds (Transport,
// whole and streaming), and the response cap (MaxResponseBytes).
func TestDefencesAtTheirLimits(t *testing.T) {
	budget := limits.Budget{MaxWireBytes: limitN, MaxDecodedBytes: limitN}
	plain := text(7, limitN+1)
	// A gzip body whose decoded size is at, or one past, the limit: its
	// wire size is far below it, so only the decoded bound can stop it.
	gz := map[int][]byte{limitN: testenc.Encode("gzip", plain[:limitN]), limitN + 1: testenc.Encode("gzip", plain)}
	for _, p := range allProtos {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			for _, n := range []int{limitN, limitN + 1} {
				past := n > limitN
				// Request bodies, through the Middleware.
				for _, streaming := range []bool{false, true} {
					for _, coding := range []string{"", "gzip"} {
						body := plain[:n]
						if coding == "gzip" {
							body = gz[n]
						}
						name := fmt.Sprintf("request %d %q streaming=%v", n, coding, streaming)
						stockX := upload(t, p, nil, coding, body)
						mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{Budget: budget, Streaming: streaming})
						if err != nil {
							t.Fatal(err)
						}
						oursX := upload(t, p, mw, coding, body)
						switch {
						case !past && oursX != stockX:
							t.Errorf("%s at the limit: ours %v, stock %v", name, oursX, stockX)
						case past && oursX.status != http.StatusRequestEntityTooLarge:
							t.Errorf("%s past the limit: ours %v, want 413", name, oursX)
						}
					}
				}
				// Response bodies, through the Transport.
				for _, streaming := range []bool{false, true} {
					for _, coding := range []string{"", "gzip"} {
						body := plain[:n]
						if coding == "gzip" {
							body = gz[n]
						}
						name := fmt.Sprintf("response %d %q streaming=%v", n, coding, streaming)
						stockX, _ := download(t, p, nil, coding, body)
						oursX, err := download(t, p, &boundhttp.Transport{Budget: budget, Streaming: streaming}, coding, body)
						var e *limits.Error
						switch {
						case !past && (oursX != stockX || err != nil):
							t.Errorf("%s at the limit: ours %v (%v), stock %v", name, oursX, err, stockX)
						case past && !errors.As(err, &e):
							t.Errorf("%s past the limit: ours %v, %v; want a *limits.Error", name, oursX, err)
						case past && e.Stage != limits.StageWire && e.Stage != limits.StageDecoded:
							t.Errorf("%s past the limit: stage %s, want wire or decoded", name, e.Stage)
						}
					}
				}
				// The response cap, on the server.
				capped := boundhttp.ResponseCap(limitN)
				stockX, _ := download(t, p, nil, "", plain[:n])
				oursX, err := downloadFrom(t, p, capped, plain[:n])
				switch {
				case !past && (oursX != stockX || err != nil):
					t.Errorf("response cap, %d bytes: ours %v (%v), stock %v", n, oursX, err, stockX)
				case past && oursX.status != http.StatusInternalServerError:
					t.Errorf("response cap, %d bytes: ours %v, %v; want 500 (over the cap before anything was sent)", n, oursX, err)
				}
			}
		})
	}
}

// decodedHash is the handler of the request bodies: it answers with the
// size and hash of the decoded body, decoding a gzip body itself where it
// still says it is one (stock: nothing decoded it before), and answers a
// body over a limit 413 as a handler written for http.MaxBytesReader does.
func decodedHash(w http.ResponseWriter, r *http.Request) {
	var src io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		src = zr
	}
	h := sha256.New()
	n, err := io.Copy(h, src)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	}
}

// upload POSTs body (with Content-Encoding coding, if any) over p to a
// handler behind mw (nil: none) that answers with the hash of the decoded
// body.
func upload(t *testing.T, p proto, mw func(http.Handler) http.Handler, coding string, body []byte) exchange {
	t.Helper()
	var h http.Handler = http.HandlerFunc(decodedHash)
	if mw != nil {
		h = mw(h)
	}
	srv := httptest.NewUnstartedServer(h)
	startServer(p, srv)
	defer srv.Close()
	base := baseTransport(false, p, srv.Certificate())
	defer base.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	if coding != "" {
		req.Header.Set("Content-Encoding", coding)
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return exchange{err: err.Error()}
	}
	defer resp.Body.Close()
	x := readAnswer(resp, func(s string) string { return s })
	x.head = "" // a rejection's problem document names the limit; the status tells
	return x
}

// download GETs body (sent with Content-Encoding coding) over p through rt
// (nil: stock), and returns what the caller read and the error of the
// round trip or the read.
func download(t *testing.T, p proto, rt *boundhttp.Transport, coding string, body []byte) (exchange, error) {
	t.Helper()
	return get(t, p, rt, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if coding != "" {
			w.Header().Set("Content-Encoding", coding)
		}
		w.Write(body)
	}))
}

// downloadFrom GETs body over p from a handler behind mw, with a stock
// client.
func downloadFrom(t *testing.T, p proto, mw func(http.Handler) http.Handler, body []byte) (exchange, error) {
	t.Helper()
	return get(t, p, nil, mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
	})))
}

// get GETs from h over p through rt (nil: a stock base transport).
func get(t *testing.T, p proto, rt *boundhttp.Transport, h http.Handler) (exchange, error) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	startServer(p, srv)
	defer srv.Close()
	base := baseTransport(rt != nil, p, srv.Certificate())
	defer base.CloseIdleConnections()
	var c http.RoundTripper = base
	if rt != nil {
		rt.Base = base
		c = rt
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := c.RoundTrip(req)
	if err != nil {
		return exchange{err: "round trip"}, err
	}
	defer resp.Body.Close()
	if rt == nil && resp.Header.Get("Content-Encoding") == "gzip" {
		// Stock decodes nothing it did not ask for: the caller does.
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return exchange{err: "gzip"}, err
		}
		resp.Body = io.NopCloser(zr)
	}
	x := readAnswer(resp, func(s string) string { return s })
	if x.err != "" {
		_, err = io.Copy(io.Discard, resp.Body)
		if err == nil {
			err = errors.New(x.err)
		}
		x.err = "read"
	}
	x.head = ""
	return x, err
}
