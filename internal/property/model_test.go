package property

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/limits"
)

var (
	seedFlag  = flag.Uint64("property.seed", 1, "the seed of the generated cases")
	casesFlag = flag.Int("property.cases", 0, "how many generated cases per side (0: the fixed sample, about a minute)")
)

// limit is the cases' MaxDecodedBytes: small, so that bombs are cheap.
const limit = 4096

// budget is every case's budget: the decoded limit, two layers, and time
// for the slowest machine.
var budget = limits.Budget{MaxDecodedBytes: limit, MaxWireBytes: 8 << 20, MaxLayers: 2}

// The dimensions of an exchange. Each is a list of the values the model
// knows; a case picks one of each.
var (
	protos  = []string{"h1", "h1tls", "h2c", "h2tls"}
	methods = []string{"GET", "HEAD", "POST"}
	// statuses: a redirect's target answers the same case with 200.
	statuses = []int{200, 206, 204, 304, 302, 404, 500}
	framings = []string{"length", "chunked", "close"} // chunked and close: stream end over HTTP/2
	// codings: the Content-Encoding lines as sent (one line per element) and
	// the codings applied, in order; nil applied: refused, at stage.
	codings = []coding{
		{nil, nil, ""},
		{[]string{"gzip"}, []string{"gzip"}, ""},
		{[]string{"br"}, []string{"br"}, ""},
		{[]string{"zstd"}, []string{"zstd"}, ""},
		{[]string{"deflate"}, []string{"deflate"}, ""},
		{[]string{"gzip, br"}, []string{"gzip", "br"}, ""},
		{[]string{"gzip", "zstd"}, []string{"gzip", "zstd"}, ""}, // two lines
		{[]string{"GZip"}, []string{"gzip"}, ""},
		{[]string{" \tgzip , "}, []string{"gzip"}, ""},
		{[]string{"identity"}, nil, ""},
		{[]string{""}, nil, ""},
		{[]string{"x-unknown"}, nil, limits.StageEncoding},
		{[]string{"gzip, gzip, gzip"}, []string{"gzip", "gzip", "gzip"}, limits.StageLayers},
		{[]string{strings.Repeat("x", 8<<10)}, nil, limits.StageEncoding},
	}
	// sizes: decoded sizes around the limit, and a bomb.
	sizes = []int64{0, 1, limit - 1, limit, limit + 1, 64 * limit}
	// stops: where the peer stops.
	stops   = []string{"complete", "after-headers", "mid-body", "before-end", "trailing"}
	shapes  = []string{"text", "random", "zeros"}
	entries = []string{"whole", "stream", "fetch", "readbody", "resultof", "preview", "decoding"}
	// timings: how the peer sends the body: at once, or in pieces of 1 to
	// 64 bytes, each flushed (tiny chunks, tiny DATA frames).
	timings = []string{"fast", "drip"}
)

// A coding is one value of the Content-Encoding dimension.
type coding struct {
	lines   []string // the header lines; nil: no header
	applied []string // the codings the body carries, in the order applied
	refused limits.Stage
}

// A xcase is one generated exchange.
type xcase struct {
	Proto, Method string
	Status        int
	Framing       string
	Coding        int // index into codings
	Size          int64
	Stop, Shape   string
	Entry         string
	Timing        string
	Seed          uint64
}

func (c xcase) String() string {
	return fmt.Sprintf("%s %s %d %s ce=%q size=%d %s %s %s entry=%s seed=%d", c.Proto, c.Method, c.Status, c.Framing,
		codingName(codings[c.Coding]), c.Size, c.Stop, c.Shape, c.Timing, c.Entry, c.Seed)
}

func codingName(c coding) string {
	s := strings.Join(c.lines, " | ")
	if len(s) > 40 {
		s = s[:20] + fmt.Sprintf("...(%d bytes)", len(s))
	}
	return s
}

// generate returns case i of the sample of seed.
func generate(seed uint64, i int) xcase {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	pick := func(n int) int { return r.IntN(n) }
	c := xcase{
		Proto: protos[pick(len(protos))], Method: methods[pick(len(methods))], Status: statuses[pick(len(statuses))],
		Framing: framings[pick(len(framings))], Coding: pick(len(codings)), Size: sizes[pick(len(sizes))],
		Stop: stops[pick(len(stops))], Shape: shapes[pick(len(shapes))], Entry: entries[pick(len(entries))],
		Seed: r.Uint64(), Timing: timings[pick(len(timings))],
	}
	if pick(100) == 0 {
		// The peer stalls mid-body: the case waits for the body's
		// Timeout (stallTimeout), so it is rare.
		c.Stop = "stall"
	}
	return c.normal()
}

// stallTimeout is the body Timeout of a case whose peer stalls.
const stallTimeout = 300 * time.Millisecond

// normal folds the values a case cannot have onto ones it can: HTTP/2 has
// no close-delimited framing (its stream end is the chunked value's), and
// the decoding entry point has no HTTP.
func (c xcase) normal() xcase {
	if strings.HasPrefix(c.Proto, "h2") && c.Framing == "close" {
		c.Framing = "chunked"
	}
	if c.Entry == "decoding" {
		c.Proto, c.Method, c.Status, c.Framing = "none", "GET", 200, "length"
		if c.Stop == "after-headers" || c.Stop == "mid-body" || c.Stop == "stall" {
			c.Stop = "complete"
		}
	}
	return c
}

// A prepared case is a case's bodies, made once: encoding a bomb with
// brotli takes long under the race detector, and the model, the origin and
// the oracles all need them.
type prepared struct {
	c          xcase
	data, wire []byte
	inter      int64
	truncated  bool
}

var (
	prepMu   sync.Mutex
	prepLast [4]*prepared // the cases of the last few calls: the sides run at once
	prepNext int
)

// prep returns c's bodies.
func (c xcase) prep() *prepared {
	prepMu.Lock()
	for _, p := range prepLast {
		if p != nil && p.c == c {
			prepMu.Unlock()
			return p
		}
	}
	prepMu.Unlock()
	p := &prepared{c: c, data: c.makeData()}
	w := p.data
	applied := codings[c.Coding].applied
	for i, name := range applied {
		w = testenc.Encode(name, w)
		if i < len(applied)-1 {
			p.inter = max(p.inter, int64(len(w)))
		}
	}
	p.truncated = len(w) > 1
	switch {
	case c.Stop == "before-end" && c.coded() && len(w) > 1:
		w = w[:len(w)-min(4, len(w)-1)]
	case c.Stop == "trailing" && c.coded():
		w = append(bytes.Clone(w), "trailing bytes"...)
	}
	p.wire = w
	prepMu.Lock()
	prepLast[prepNext] = p
	prepNext = (prepNext + 1) % len(prepLast)
	prepMu.Unlock()
	return p
}

// data returns the decoded body of c.
func (c xcase) data() []byte { return c.prep().data }

// makeData makes the decoded body of c.
func (c xcase) makeData() []byte {
	b := make([]byte, c.Size)
	switch c.Shape {
	case "text":
		copy(b, testenc.Text(int(c.Size)))
	case "random":
		rand.NewChaCha8([32]byte{byte(c.Seed), byte(c.Seed >> 8), byte(c.Seed >> 16)}).Read(b)
	}
	return b
}

// wire returns the body as the origin sends it when it completes: the data
// with c's codings applied, then what the stop does to it (a coded stream
// cut before its end but framed as whole; bytes after its end).
func (c xcase) wire() []byte { return c.prep().wire }

// coded reports whether c's body carries a coding that marks its end.
func (c xcase) coded() bool {
	return len(codings[c.Coding].applied) > 0 && codings[c.Coding].refused == ""
}

// hasBody reports whether the answer to c carries a body at all.
func (c xcase) hasBody() bool {
	return c.Method != "HEAD" && c.Status != 204 && c.Status != 304
}

// An expect is what the model says of a case: success with the data, or a
// refusal at one of stages, or a failure of any kind (a cut connection).
type expect struct {
	ok     bool
	stages []limits.Stage // refusal; empty with !ok: any failure
	either bool           // success or failure: a body accepted must still be the data
}

// want returns the model's verdict on c.
func (c xcase) want() expect {
	if !c.hasBody() {
		return expect{ok: true}
	}
	cd := codings[c.Coding]
	wire := c.wire()
	overHTTP := c.Entry != "decoding"
	cut := c.Stop == "after-headers" || c.Stop == "mid-body"
	switch {
	case overHTTP && c.Framing == "length" && len(wire) == 0:
		// A length of 0: an empty body whatever its codings, complete with
		// the headers (what follows them, a reset stream included, is no
		// part of it), over every protocol.
		return expect{ok: true}
	case c.Status == 206 && (len(cd.applied) > 0 || cd.refused != ""):
		return expect{stages: []limits.Stage{limits.StageEncoding}} // a range of a coded body
	case cd.refused != "":
		return expect{stages: []limits.Stage{cd.refused}}
	case cut:
		// The connection ends before the body: a breach of integrity, or
		// of the limit if the bytes that came already passed it.
		return expect{}
	}
	over := c.Size > limit || c.intermediate() > limit
	if c.Stop == "stall" {
		if c.Framing == "close" && !c.coded() {
			return expect{stages: []limits.Stage{limits.StageIntegrity}} // refused at its headers
		}
		// The body's Timeout ends it, unless the bytes that came already
		// passed the limit.
		return expect{stages: stagesOr(over, limits.StageTimeout)}
	}
	switch {
	case c.Framing == "close" && !c.coded(), c.Framing == "close" && len(wire) == 0:
		// Nothing proves the end: the framing does not, and no coding
		// marked it (or had a byte to mark it with).
		return expect{stages: stagesOr(over, limits.StageIntegrity)}
	case c.Stop == "before-end" && c.coded() && c.truncated():
		return expect{stages: stagesOr(over, limits.StageIntegrity)}
	case c.Stop == "trailing" && c.coded():
		return expect{stages: stagesOr(over, limits.StageIntegrity)}
	case over:
		return expect{stages: []limits.Stage{limits.StageDecoded}}
	}
	return expect{ok: true}
}

// intermediate returns the largest output of a layer under the outermost
// one: every layer's output is held to MaxDecodedBytes, the final one's
// and the ones between codings alike.
func (c xcase) intermediate() int64 { return c.prep().inter }

// truncated reports whether c's stop cut its coded stream (a stream of one
// byte is left whole).
func (c xcase) truncated() bool { return c.prep().truncated }

// stagesOr is stage, or also decoded when the body is over the limit: a
// decoder may pass the limit before it meets the flaw.
func stagesOr(over bool, stage limits.Stage) []limits.Stage {
	if over {
		return []limits.Stage{stage, limits.StageDecoded}
	}
	return []limits.Stage{stage}
}
