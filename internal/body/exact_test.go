package body

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/chunk"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

var text = testenc.Text

// cutShort is a source that gives its bytes, then fails with
// io.ErrUnexpectedEOF: a connection that ended before its declared length.
type cutShort struct{ r io.Reader }

func (c cutShort) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// wholeOutcome is what reading a whole body came to.
type wholeOutcome struct {
	exact    bool // no decoder after Open
	hint     int64
	err      error
	data     []byte
	size     int64
	usage    limits.Usage
	verified bool
	held     int64 // InUse once read, before Close
	breach   *limits.Error
}

// readWhole opens src under cfg, reads it whole and reads it out, and
// closes it; f is the budget cfg charges.
func readWhole(t *testing.T, cfg *Config, src *Source, f *limits.InFlight) wholeOutcome {
	t.Helper()
	b := new(Body)
	if err := b.Open(cfg, src); err != nil {
		t.Fatalf("Open: %v", err)
	}
	o := wholeOutcome{exact: b.d == nil, hint: src.SizeHint}
	if src.Mode == Whole {
		o.err = b.ReadAll()
	}
	if o.err == nil {
		o.data, o.err = io.ReadAll(b)
	}
	o.size = b.Size()
	o.usage, o.verified = b.Usage().Get()
	o.held = f.InUse()
	o.breach = b.Breach()
	b.Close()
	if got := f.InUse(); got != 0 {
		t.Errorf("InUse() = %d after Close, want 0", got)
	}
	return o
}

// TestExactBodyTakesNoDecoder pins which bodies are read with no decoder
// and that it changes no outcome: a whole server body with no coding,
// framed by its length (Source.Exact), within one chunk and the budget,
// whose time the connection's deadline bounds if it has any, is read
// with no decoder, into one chunk of the length's capacity, with the same
// bytes, Size, Usage, verified end and breach as the same body read
// through the decoder (Exact false). Any other body, one that asks for
// more than a count (a character limit, a checksum) included, takes the
// decoder.
func TestExactBodyTakesNoDecoder(t *testing.T) {
	t.Parallel()
	const n = 4097
	data := text(chunk.MaxSize + 1)
	checksum, err := decoder.NewConfig([]decoder.Option{decoder.WithRequireChecksum()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		edit  func(cfg *Config, src *Source)
		exact bool
	}{
		{"framed by its length", func(*Config, *Source) {}, true},
		{"not framed", func(_ *Config, s *Source) { s.Exact = false }, false},
		{"on the client", func(c *Config, _ *Source) { c.Side = Client }, false},
		{"streamed", func(_ *Config, s *Source) { s.Mode = Stream }, false},
		{"lazy", func(_ *Config, s *Source) { s.Mode = Lazy }, false},
		{"coded", func(_ *Config, s *Source) {
			s.Encoding = "gzip"
			s.Body = bytes.NewReader(gzipped(t, data[:n]))
		}, false},
		{"no length", func(_ *Config, s *Source) { s.SizeHint = -1 }, false},
		{"one byte", func(_ *Config, s *Source) { s.SizeHint, s.Body = 1, bytes.NewReader(data[:1]) }, true},
		{"one chunk", func(_ *Config, s *Source) {
			s.SizeHint, s.Body = chunk.MaxSize, bytes.NewReader(data[:chunk.MaxSize])
		}, true},
		{"over one chunk", func(_ *Config, s *Source) {
			s.SizeHint, s.Body = chunk.MaxSize+1, bytes.NewReader(data[:chunk.MaxSize+1])
		}, false},
		{"at the decoded limit", func(_ *Config, s *Source) { s.Budget.MaxDecodedBytes = n }, true},
		{"over the decoded limit", func(_ *Config, s *Source) { s.Budget.MaxDecodedBytes = n - 1 }, false},
		{"at the wire limit", func(_ *Config, s *Source) { s.Budget.MaxWireBytes = n }, true},
		{"over the wire limit", func(_ *Config, s *Source) { s.Budget.MaxWireBytes = n - 1 }, false},
		{"a character limit", func(_ *Config, s *Source) { s.Budget.MaxDecodedRunes = 1 << 20 }, false},
		{"a checksum required", func(c *Config, _ *Source) { c.Decoder = checksum }, false},
		{"a timeout on no deadline", func(_ *Config, s *Source) { s.Budget.Timeout = time.Hour }, false},
		{"a timeout on the connection's deadline", func(_ *Config, s *Source) {
			w := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
			s.Budget.Timeout, s.ArmedAt, s.RC = time.Hour, time.Now(), http.NewResponseController(w)
		}, true},
		{"cut short", func(_ *Config, s *Source) { s.Body = cutShort{bytes.NewReader(data[:n-1])} }, true},
		{"ends sooner", func(_ *Config, s *Source) { s.Body = bytes.NewReader(data[:n-1]) }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := func(exact bool) wholeOutcome {
				f := limits.NewInFlight(1 << 20)
				cfg := config(t, Server, f)
				src := &Source{Body: bytes.NewReader(data[:n]), Mode: Whole, SizeHint: n, Exact: true,
					Budget: limits.Budget{}.WithDefaults(), Ctx: context.Background()}
				tt.edit(cfg, src)
				if cfg.Decoder == checksum {
					c, err := decoder.NewConfig([]decoder.Option{decoder.WithRequireChecksum(), decoder.WithInFlight(f)})
					if err != nil {
						t.Fatal(err)
					}
					cfg.Decoder = c
				}
				src.Exact = src.Exact && exact
				return readWhole(t, cfg, src, f)
			}
			got, want := run(true), run(false)
			if got.exact != tt.exact || want.exact {
				t.Fatalf("read with no decoder: %v (and %v with Exact false), want %v", got.exact, want.exact, tt.exact)
			}
			if !bytes.Equal(got.data, want.data) || got.size != want.size || got.usage != want.usage ||
				got.verified != want.verified || got.held != want.held {
				t.Errorf("read %d bytes, Size %d, Usage %+v verified %v, InUse %d; through the decoder %d, %d, %+v %v, %d",
					len(got.data), got.size, got.usage, got.verified, got.held,
					len(want.data), want.size, want.usage, want.verified, want.held)
			}
			if (got.err == nil) != (want.err == nil) || fmt.Sprint(got.breach) != fmt.Sprint(want.breach) {
				t.Errorf("error %v, breach %v; through the decoder %v, %v", got.err, got.breach, want.err, want.breach)
			}
			if tt.exact && got.err == nil && got.held != chunkCapOf(got.hint) {
				t.Errorf("InUse() = %d while the body is held, want %d, the capacity of its length's chunk", got.held, chunkCapOf(got.hint))
			}
		})
	}
}

// chunkCapOf returns the capacity of the pooled chunk that holds n bytes.
func chunkCapOf(n int64) int64 {
	c := int64(chunk.MinSize)
	for c < n {
		c <<= 1
	}
	return c
}
