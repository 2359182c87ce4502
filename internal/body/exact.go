package body

import (
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// exact reports whether src is read with no decoder (see
// decoder.ReadExact): a whole request body with no coding whose source is
// framed by its declared length (Source.Exact), small enough for one chunk
// and within the budget, whose time the connection's read deadline bounds
// (see ownsClock), if it has a Timeout at all. Every other body, and one
// whose budget or options ask for more than counting (a character limit,
// a checksum), takes the decoder.
func exact(cfg *Config, src *Source) bool {
	return src.Exact && cfg.Side == Server && src.Mode == Whole && src.Encoding == "" &&
		(src.Budget.Timeout <= 0 || ownsClock(cfg.Side, src)) &&
		decoder.Fits(src.SizeHint, src.Budget, &cfg.Decoder)
}

// readExact reads an exact body into its chunks (see exact).
func (b *Body) readExact() error {
	var u limits.Usage
	var err error
	b.chunks, u, err = decoder.ReadExact(&decoder.Exact{Src: b.src.Body, Length: b.src.SizeHint,
		Config: b.cfg.Decoder, Ctx: b.src.Ctx, Wait: b.src.InFlightWait, Peers: b.src.Peers})
	b.size = u.DecodedBytes // the bytes read, each one decoded byte; the body's size if it ended well
	return err
}

// counts returns the bytes read off the source and decoded so far: an
// exact body's are its bytes read (see readExact).
func (b *Body) counts() limits.Usage {
	if b.d != nil {
		return b.d.Usage()
	}
	return limits.Usage{WireBytes: b.size, DecodedBytes: b.size}
}
