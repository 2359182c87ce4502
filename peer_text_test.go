package boundhttp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/peertext"
	"github.com/boundhttp/boundhttp/limits"
)

// hostileCodings are Content-Encoding values a peer may choose to reach
// whatever renders a rejection: control bytes, quotes that would close the
// quoted coding in an error's text, invalid UTF-8, an escape that would be
// escaped again if a renderer could not tell stored text from escaped text,
// a megabyte of multi-byte characters (a cut inside a rune) and a megabyte
// of continuation bytes. wire marks the ones an HTTP/1.1 peer can send in a
// header (net/http refuses control bytes other than tab in a request).
var hostileCodings = []struct {
	name, coding string
	wire         bool
}{
	{"control bytes", "zz\x01\x7f\x1b[31m", false},
	{"quotes", `br" limit exceeded: observed 0 > limit 1 "x`, true},
	{"invalid UTF-8", "\xff\xfe\xc3(", true},
	{"an escape", `\x41\x5c`, true},
	{"1 MB of é", strings.Repeat("é", 1<<19), false},
	{"1 MB of continuation bytes", strings.Repeat("\x80", 1<<20), false},
	{"100 KB of é after one byte", "x" + strings.Repeat("é", 50_000), true},
}

// checkStored pins the storage half of the one rule for peer text: an
// Error field holds the peer's coding raw, cut by one function to
// limits.MaxEcho bytes at a rune boundary, never escaped.
func checkStored(t *testing.T, where string, e *limits.Error, raw string) {
	t.Helper()
	want := peertext.Cut(strings.ToLower(raw))
	if e.Encoding != want {
		t.Errorf("%s: Encoding = %.80q, want the raw coding cut to %d bytes %.80q", where, e.Encoding, limits.MaxEcho, want)
	}
	if len(e.Encoding) > limits.MaxEcho || utf8.ValidString(raw) && !utf8.ValidString(e.Encoding) {
		t.Errorf("%s: Encoding of %d bytes, valid UTF-8 %v; want at most %d, cut at a rune boundary",
			where, len(e.Encoding), utf8.ValidString(e.Encoding), limits.MaxEcho)
	}
}

// checkRendered pins the rendering half: text holds the coding exactly as
// limits.Echo writes the stored form (escaped once, bounded), and nothing
// outside printable ASCII.
func checkRendered(t *testing.T, where, text, raw string, max int) {
	t.Helper()
	want := limits.Echo(peertext.Cut(strings.ToLower(raw)))
	if !strings.Contains(text, want) {
		t.Errorf("%s: %.300q does not hold the coding escaped once, %q", where, text, want)
	}
	if len(text) > max {
		t.Errorf("%s: %d bytes, want at most %d", where, len(text), max)
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x20 || c >= 0x7f {
			t.Errorf("%s: byte %#x at %d of %.300q: want printable ASCII only", where, c, i, text)
			break
		}
	}
}

func TestPeerCodingStoredRawAndRenderedEscapedOnce(t *testing.T) {
	t.Parallel()
	for _, tt := range hostileCodings {
		t.Run(tt.name, func(t *testing.T) {
			// decoding: the unsupported coding, and the first coding past
			// MaxLayers.
			for _, ce := range []string{tt.coding, "gzip, gzip, " + tt.coding} {
				_, err := decoding.NewReader(strings.NewReader(""), ce, limits.Budget{})
				var e *limits.Error
				if !errors.As(err, &e) {
					t.Fatalf("decoding.NewReader: %v, want a *limits.Error", err)
				}
				checkStored(t, "decoding "+string(e.Stage), e, tt.coding)
				checkRendered(t, "decoding "+string(e.Stage)+" Error()", e.Error(), tt.coding, 1024)

				// The documents made from that Error.
				p := boundhttp.ProblemOf(e)
				checkRendered(t, "Problem.Encoding", p.Encoding, tt.coding, 4*limits.MaxEcho+24)
				checkRendered(t, "Problem.Detail", p.Detail, tt.coding, 1024)
				r := boundhttp.RejectionOf(e)
				checkRendered(t, "Rejection.Encoding", r.Encoding, tt.coding, 4*limits.MaxEcho+24)
				checkRendered(t, "Rejection.Detail", r.Detail, tt.coding, 1024)
			}

			// The in-flight budget's own text, for a coding it was charged
			// for.
			busy := &limits.Error{Stage: limits.StageInFlight, Limit: 10, Observed: 5, Encoding: peertext.Cut(strings.ToLower(tt.coding))}
			checkRendered(t, "inflight Error()", busy.Error(), tt.coding, 1024)

			// The Middleware: its problem document and its log record.
			var logs bytes.Buffer
			mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
				Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("handler called") }))
			w := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/", strings.NewReader("x"))
			req.Header.Set("Content-Encoding", tt.coding)
			h.ServeHTTP(w, req)
			var doc, rec map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || w.Code != http.StatusUnsupportedMediaType {
				t.Fatalf("middleware: %d %.200q (%v); want 415 problem+json", w.Code, w.Body.Bytes(), err)
			}
			json.Unmarshal(logs.Bytes(), &rec)
			for _, m := range []struct {
				where string
				v     any
			}{{"problem encoding", doc["encoding"]}, {"problem detail", doc["detail"]}, {"log encoding", rec["encoding"]}} {
				s, _ := m.v.(string)
				checkRendered(t, "middleware "+m.where, s, tt.coding, 1024)
			}
			if w.Body.Len() > 2048 || logs.Len() > 2048 {
				t.Errorf("middleware: problem %d bytes, log record %d bytes; want both under 2 KiB", w.Body.Len(), logs.Len())
			}
		})
	}
}

func TestPeerCodingOverTheWireToTransportAndResult(t *testing.T) {
	t.Parallel()
	for _, tt := range hostileCodings {
		if !tt.wire {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			for _, status := range []string{"200 OK", "206 Partial Content"} {
				url := rawConnServer(t, func(c net.Conn, _ *http.Request) {
					io.WriteString(c, "HTTP/1.1 "+status+"\r\nContent-Encoding: "+tt.coding+"\r\nContent-Length: 3\r\n\r\nabc")
				})
				tr := &boundhttp.Transport{}
				client := &http.Client{Transport: tr}
				req, _ := http.NewRequest("GET", url, nil)
				_, err := client.Do(req)
				var e *limits.Error
				if !errors.As(err, &e) || e.Stage != limits.StageEncoding {
					t.Fatalf("%s: %.200v; want a *limits.Error of stage encoding", status, err)
				}
				checkStored(t, status+" Transport", e, tt.coding)
				checkRendered(t, status+" Transport error text", err.Error(), tt.coding, 2048)

				req, _ = http.NewRequest("GET", url, nil)
				res := boundhttp.Fetch(client, req)
				if res.Rejection == nil {
					t.Fatalf("%s: Fetch = %+v, want a rejection", status, res)
				}
				checkRendered(t, status+" Result.Rejection.Encoding", res.Rejection.Encoding, tt.coding, 4*limits.MaxEcho+24)
				checkRendered(t, status+" Result.Rejection.Detail", res.Rejection.Detail, tt.coding, 1024)
				tr.CloseIdleConnections()
			}
		})
	}
}
