package testenc

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// HTTP/2 frame types and flags an H2Conn writes and reads (RFC 9113 6).
const (
	H2Data         byte = 0x0
	H2Headers      byte = 0x1
	H2RSTStream    byte = 0x3
	H2Settings     byte = 0x4
	H2Ping         byte = 0x6
	H2GoAway       byte = 0x7
	H2WindowUpdate byte = 0x8

	H2FlagEndStream  byte = 0x1
	H2FlagAck        byte = 0x1
	H2FlagEndHeaders byte = 0x4
	H2FlagPadded     byte = 0x8
)

const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// An H2Frame is one frame read from the client.
type H2Frame struct {
	Type, Flags byte
	Stream      uint32
	Payload     []byte
}

// An H2Conn is the server side of an HTTP/2 connection written by hand, for
// peers no HTTP/2 library would play: frames are written as given, HPACK is
// literal without indexing, and nothing is read unless the test reads it.
// Its write methods are safe for concurrent use.
type H2Conn struct {
	net.Conn
	wmu sync.Mutex

	// The client's flow-control windows, as its SETTINGS and WINDOW_UPDATE
	// frames set them (RFC 9113 6.9): NextRequest and ReadLoop credit them,
	// DataFlow waits for room.
	fmu      sync.Mutex
	fcond    *sync.Cond
	connWin  int64
	initWin  int64
	streams  map[uint32]int64
	readDone bool
}

// flow returns the window state, set up on first use.
func (c *H2Conn) flow() *sync.Cond {
	if c.fcond == nil {
		c.fcond = sync.NewCond(&c.fmu)
		c.connWin, c.initWin, c.streams = 65535, 65535, map[uint32]int64{}
	}
	return c.fcond
}

// credit records what a frame from the client says about flow control.
func (c *H2Conn) credit(f H2Frame) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	cond := c.flow()
	switch {
	case f.Type == H2Settings && f.Flags&H2FlagAck == 0:
		for p := f.Payload; len(p) >= 6; p = p[6:] {
			if binary.BigEndian.Uint16(p) == 0x4 { // SETTINGS_INITIAL_WINDOW_SIZE
				v := int64(binary.BigEndian.Uint32(p[2:]))
				for id := range c.streams {
					c.streams[id] += v - c.initWin
				}
				c.initWin = v
			}
		}
	case f.Type == H2WindowUpdate && len(f.Payload) == 4:
		inc := int64(binary.BigEndian.Uint32(f.Payload) & 0x7fffffff)
		if f.Stream == 0 {
			c.connWin += inc
		} else {
			c.streams[f.Stream] = c.window(f.Stream) + inc
		}
	}
	cond.Broadcast()
}

// window returns a stream's window; c.fmu is held.
func (c *H2Conn) window(stream uint32) int64 {
	w, ok := c.streams[stream]
	if !ok {
		w = c.initWin
		c.streams[stream] = w
	}
	return w
}

// ReadLoop reads the client's frames until the connection fails,
// acknowledging SETTINGS and PINGs and crediting WINDOW_UPDATEs, so that
// DataFlow can send as much as the client allows. Run it in its own
// goroutine after NextRequest; nothing else may read from c meanwhile.
func (c *H2Conn) ReadLoop() {
	defer func() {
		c.fmu.Lock()
		c.flow()
		c.readDone = true
		c.fcond.Broadcast()
		c.fmu.Unlock()
	}()
	for {
		f, err := c.ReadFrame()
		if err != nil || c.answer(f) != nil {
			return
		}
	}
}

// answer acknowledges a SETTINGS or PING frame and credits the windows.
func (c *H2Conn) answer(f H2Frame) error {
	c.credit(f)
	switch {
	case f.Type == H2Settings && f.Flags&H2FlagAck == 0:
		return c.WriteFrame(H2Settings, H2FlagAck, 0, nil)
	case f.Type == H2Ping && f.Flags&H2FlagAck == 0:
		return c.WriteFrame(H2Ping, H2FlagAck, 0, f.Payload)
	}
	return nil
}

// errNoWindow is DataFlow's error when the client stopped reading.
var errNoWindow = errors.New("testenc: no flow-control window: the client stopped reading")

// DataFlow is Data within the client's flow-control windows: it waits (at
// most 10 seconds, while ReadLoop runs) until the stream and the
// connection have room for the frame's whole payload, padding included.
func (c *H2Conn) DataFlow(stream uint32, p []byte, pad int, endStream bool) error {
	size := int64(len(p))
	if pad > 0 {
		size += 1 + int64(pad)
	}
	c.fmu.Lock()
	cond := c.flow()
	deadline := time.AfterFunc(10*time.Second, func() {
		c.fmu.Lock()
		c.readDone = true
		cond.Broadcast()
		c.fmu.Unlock()
	})
	defer deadline.Stop()
	for !c.readDone && (c.connWin < size || c.window(stream) < size) {
		cond.Wait()
	}
	if c.connWin < size || c.window(stream) < size {
		c.fmu.Unlock()
		return errNoWindow
	}
	c.connWin -= size
	c.streams[stream] -= size
	c.fmu.Unlock()
	return c.Data(stream, p, pad, endStream)
}

// WriteFrame writes one frame, in one write (so one TLS record).
func (c *H2Conn) WriteFrame(typ, flags byte, stream uint32, payload []byte) error {
	f := make([]byte, 9, 9+len(payload))
	f[0], f[1], f[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	f[3], f[4] = typ, flags
	binary.BigEndian.PutUint32(f[5:], stream&0x7fffffff)
	f = append(f, payload...)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.Conn.Write(f)
	return err
}

// ReadFrame reads the next frame from the client (at most 16 MiB).
func (c *H2Conn) ReadFrame() (H2Frame, error) {
	var h [9]byte
	if _, err := io.ReadFull(c.Conn, h[:]); err != nil {
		return H2Frame{}, err
	}
	n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	f := H2Frame{Type: h[3], Flags: h[4], Stream: binary.BigEndian.Uint32(h[5:]) & 0x7fffffff, Payload: make([]byte, n)}
	_, err := io.ReadFull(c.Conn, f.Payload)
	return f, err
}

// NextRequest reads frames, acknowledging SETTINGS and PINGs and crediting
// flow-control windows, until the client opens a stream, and returns the
// stream's id.
func (c *H2Conn) NextRequest() (uint32, error) {
	for {
		f, err := c.ReadFrame()
		if err != nil {
			return 0, err
		}
		if f.Type == H2Headers {
			return f.Stream, nil
		}
		if err := c.answer(f); err != nil {
			return 0, err
		}
	}
}

// Headers writes one HEADERS frame (END_HEADERS set) whose block is the
// name, value pairs as HPACK literals without indexing; pseudo-headers such
// as ":status" go first.
func (c *H2Conn) Headers(stream uint32, endStream bool, pairs ...string) error {
	return c.WriteFrame(H2Headers, H2FlagEndHeaders|flagIf(endStream, H2FlagEndStream), stream, HPACKLiterals(pairs...))
}

// Data writes one DATA frame carrying p, padded with pad zero bytes
// (0 to 255; 0 means no padding field).
func (c *H2Conn) Data(stream uint32, p []byte, pad int, endStream bool) error {
	flags := flagIf(endStream, H2FlagEndStream)
	if pad > 0 {
		payload := make([]byte, 1+len(p)+pad)
		payload[0] = byte(pad)
		copy(payload[1:], p)
		return c.WriteFrame(H2Data, flags|H2FlagPadded, stream, payload)
	}
	return c.WriteFrame(H2Data, flags, stream, p)
}

func flagIf(b bool, f byte) byte {
	if b {
		return f
	}
	return 0
}

// HPACKLiterals encodes name, value pairs as HPACK literal header fields
// without indexing, with new names and no Huffman coding (RFC 7541 6.2.2).
func HPACKLiterals(pairs ...string) []byte {
	var b []byte
	for i := 0; i+1 < len(pairs); i += 2 {
		b = append(b, 0x00)
		b = hpackString(b, pairs[i])
		b = hpackString(b, pairs[i+1])
	}
	return b
}

func hpackString(b []byte, s string) []byte {
	n := uint64(len(s))
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n%128)|0x80)
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// H2Server starts an HTTP/2 server on a loopback port that hands each
// connection, after the client's preface and the server's empty SETTINGS,
// to serve; the connection is closed when serve returns or the test ends.
// With useTLS the server speaks TLS with ALPN "h2" under a fresh
// self-signed certificate, which the returned pool trusts; without, it is
// h2c with prior knowledge. It returns the base URL.
func H2Server(t testing.TB, useTLS bool, serve func(c *H2Conn)) (string, *x509.CertPool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme, pool := "http", (*x509.CertPool)(nil)
	if useTLS {
		cert, p := selfSigned(t)
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
		scheme, pool = "https", p
	}
	var mu sync.Mutex
	var conns []net.Conn
	closed := false
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				conn.Close()
				return
			}
			conns = append(conns, conn)
			mu.Unlock()
			go func() {
				defer conn.Close()
				c := &H2Conn{Conn: conn}
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				pre := make([]byte, len(h2Preface))
				if _, err := io.ReadFull(conn, pre); err != nil || string(pre) != h2Preface {
					return
				}
				conn.SetDeadline(time.Time{})
				if c.WriteFrame(H2Settings, 0, 0, nil) != nil {
					return
				}
				serve(c)
			}()
		}
	}()
	return scheme + "://" + ln.Addr().String(), pool
}

// H2Client returns a base transport for H2Server: HTTP/2 only (h2c with
// prior knowledge when pool is nil, else TLS trusting pool), starting from
// base's settings.
func H2Client(base *http.Transport, pool *x509.CertPool) *http.Transport {
	tr := base.Clone()
	var p http.Protocols
	if pool == nil {
		p.SetUnencryptedHTTP2(true)
	} else {
		p.SetHTTP2(true)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	tr.Protocols = &p
	return tr
}

func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
