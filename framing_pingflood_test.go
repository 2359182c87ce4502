package boundhttp_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestPingFloodEarnsNoFramingRoom pins the lever of the framing bound's
// credit for what the client writes: a server that sends one body byte and
// then nothing but PINGs makes the client write an ACK of the same size for
// each; credited byte for byte, the flood paid for itself (24 MiB read for
// a 1-byte body, 3 s of CPU, no end). A connection earns one byte per
// writeCredit (16) written, so the flood is cut off near the slack (2 MiB)
// with the framing error. Sabotage: a credit of one byte per byte written
// lets the 8 MiB flood through.
func TestPingFloodEarnsNoFramingRoom(t *testing.T) {
	t.Parallel()
	const limit = 8 << 20
	var sent, acks atomic.Int64
	url := pingFloodServer(t, limit, &sent, &acks)
	base := boundhttp.NewBaseTransport()
	base.Protocols = new(http.Protocols)
	base.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: &boundhttp.Transport{Base: base,
		Budget: limits.Budget{MaxWireBytes: 1 << 20, MaxDecodedBytes: 1 << 20, Timeout: 20 * time.Second}}}
	ctx, cancel := context.WithTimeout(boundhttp.WithStreaming(context.Background()), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var e *limits.Error
	if !errors.As(err, &e) || e.Field != "framing" || sent.Load() >= limit {
		t.Errorf("a 1-byte body followed by %d bytes of PINGs (%d ACKs written): %v; want the framing bound, well before %d bytes",
			sent.Load(), acks.Load(), err, limit)
	}
}

func h2frame(typ, flags byte, stream uint32, payload []byte) []byte {
	f := make([]byte, 9+len(payload))
	f[0], f[1], f[2] = byte(len(payload)>>16), byte(len(payload)>>8), byte(len(payload))
	f[3], f[4] = typ, flags
	binary.BigEndian.PutUint32(f[5:], stream)
	copy(f[9:], payload)
	return f
}

// pingFloodServer is a raw h2c server: it answers stream 1 with 200 and
// one body byte, then sends nothing but PINGs (17 bytes each, batched),
// reading what the client writes (its ACKs). It stops after limit bytes
// or when the client closes. sent counts its bytes after the body byte.
func pingFloodServer(t *testing.T, limit int64, sent, acks *atomic.Int64) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		pre := make([]byte, 24)
		if _, err := io.ReadFull(c, pre); err != nil {
			return
		}
		c.Write(h2frame(4, 0, 0, nil)) // SETTINGS
		gotHeaders := make(chan struct{})
		go func() { // read the client's frames
			var hdr [9]byte
			once := false
			for {
				if _, err := io.ReadFull(c, hdr[:]); err != nil {
					return
				}
				n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
				if _, err := io.CopyN(io.Discard, c, int64(n)); err != nil {
					return
				}
				switch hdr[3] {
				case 1: // HEADERS
					if !once {
						once = true
						close(gotHeaders)
					}
				case 6: // PING
					if hdr[4]&1 != 0 {
						acks.Add(1)
					}
				case 4:
					if hdr[4]&1 == 0 {
						c.Write(h2frame(4, 1, 0, nil))
					}
				}
			}
		}()
		<-gotHeaders
		c.Write(h2frame(1, 4, 1, []byte{0x88})) // HEADERS :status 200, END_HEADERS
		c.Write(h2frame(0, 0, 1, []byte("x")))  // one body byte, stream open
		batch := make([]byte, 0, 1000*17)
		for i := 0; i < 1000; i++ {
			batch = append(batch, h2frame(6, 0, 0, make([]byte, 8))...)
		}
		for sent.Load() < limit {
			n, err := c.Write(batch)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	return "http://" + ln.Addr().String()
}
