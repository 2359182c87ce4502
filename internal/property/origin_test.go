package property

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// An origin serves the cases over one protocol: a request for /c/N answers
// case N as the model describes it (/c/N/final: a redirect's target).
type origin struct {
	srv   *httptest.Server
	proto string
	mu    sync.Mutex
	cases map[int]xcase
}

// newOrigin starts an origin speaking proto.
func newOrigin(t *testing.T, proto string) *origin {
	o := &origin{proto: proto, cases: map[int]xcase{}}
	o.srv = httptest.NewUnstartedServer(http.HandlerFunc(o.serve))
	startProto(t, o.srv, proto)
	return o
}

// startProto starts srv speaking proto, quietly (aborted handlers are the
// cases' own), until the test ends.
func startProto(t *testing.T, srv *httptest.Server, proto string) {
	srv.Config.ErrorLog = quietLog()
	switch proto {
	case "h1tls", "h2tls":
		srv.EnableHTTP2 = proto == "h2tls"
		srv.StartTLS()
	case "h2c":
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
	default:
		srv.Start()
	}
	t.Cleanup(srv.Close)
}

// put registers c as case n.
func (o *origin) put(n int, c xcase) {
	o.mu.Lock()
	o.cases[n] = c
	o.mu.Unlock()
}

func (o *origin) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/c/"), "/")
	n, _ := strconv.Atoi(parts[0])
	o.mu.Lock()
	c, ok := o.cases[n]
	o.mu.Unlock()
	if !ok {
		http.Error(w, "no such case", http.StatusNotFound)
		return
	}
	status := c.Status
	if len(parts) > 1 {
		status = 200 // the redirect's target
	} else if status == 302 {
		w.Header().Set("Location", fmt.Sprintf("/c/%d/final", n))
	}
	cd := codings[c.Coding]
	for _, l := range cd.lines {
		w.Header().Add("Content-Encoding", l)
	}
	if !c.hasBody() || (status == 302 && len(parts) == 1) {
		w.WriteHeader(status)
		return
	}
	wire := c.wire()
	if c.Framing == "close" && !strings.HasPrefix(o.proto, "h2") {
		o.closeDelimited(w, c, status, wire)
		return
	}
	if c.Framing == "length" {
		w.Header().Set("Content-Length", strconv.Itoa(len(wire)))
	}
	w.WriteHeader(status)
	if c.Framing == "chunked" {
		w.(http.Flusher).Flush() // or net/http sets a length for a short body
	}
	switch c.Stop {
	case "after-headers":
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case "mid-body":
		c.send(w, wire[:len(wire)/2], w.(http.Flusher).Flush)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	case "stall":
		c.send(w, wire[:len(wire)/2], w.(http.Flusher).Flush)
		w.(http.Flusher).Flush()
		select { // until the client gives up (bounded)
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		panic(http.ErrAbortHandler)
	}
	c.send(w, wire, w.(http.Flusher).Flush)
}

// send writes b to w as c's timing says: at once, or in pieces of 1 to 64
// bytes, each flushed (at most 4096 pieces: the rest at once).
func (c xcase) send(w io.Writer, b []byte, flush func()) {
	if c.Timing == "drip" {
		r := rand.New(rand.NewPCG(c.Seed, 3))
		for i := 0; i < 4096 && len(b) > 0; i++ {
			n := min(len(b), 1+r.IntN(64))
			w.Write(b[:n])
			flush()
			b = b[n:]
		}
	}
	w.Write(b)
}

// closeDelimited answers over HTTP/1.1 with a body that ends when the
// connection closes (cut where the case stops).
func (o *origin) closeDelimited(w http.ResponseWriter, c xcase, status int, wire []byte) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %d %s\r\nConnection: close\r\n", status, http.StatusText(status))
	for _, l := range codings[c.Coding].lines {
		fmt.Fprintf(buf, "Content-Encoding: %s\r\n", l)
	}
	buf.WriteString("\r\n")
	switch c.Stop {
	case "after-headers":
		wire = nil
	case "mid-body", "stall":
		wire = wire[:len(wire)/2]
	}
	c.send(buf, wire, func() { buf.Flush() })
	buf.Flush()
	if c.Stop == "stall" {
		// Until the client closes the connection (bounded).
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		io.Copy(io.Discard, conn)
	}
}

// pool returns the roots that trust the origin's certificate.
func (o *origin) pool() *x509.CertPool { return certPool(o.srv) }

// certPool returns the roots that trust srv's certificate.
func certPool(srv *httptest.Server) *x509.CertPool {
	p := x509.NewCertPool()
	if srv.Certificate() != nil {
		p.AddCert(srv.Certificate())
	}
	return p
}

// speak makes tr speak the origin's protocol only.
func (o *origin) speak(tr *http.Transport) {
	tr.Protocols = new(http.Protocols)
	switch o.proto {
	case "h2tls":
		tr.Protocols.SetHTTP2(true)
	case "h2c":
		tr.Protocols.SetUnencryptedHTTP2(true)
	default:
		tr.Protocols.SetHTTP1(true)
	}
	if strings.HasSuffix(o.proto, "tls") {
		tr.TLSClientConfig = &tls.Config{RootCAs: o.pool()}
	}
}
