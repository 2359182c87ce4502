package boundhttp

import (
	"context"

	"github.com/boundhttp/boundhttp/decoding"
)

// decodeOptions returns the options of the decoder of every body: the
// Transport's DecodeOptions and, with an InFlight, the option that charges
// it.
func (t *Transport) decodeOptions() []decoding.Option {
	if t.InFlight == nil {
		return t.DecodeOptions
	}
	n := len(t.DecodeOptions)
	return append(t.DecodeOptions[:n:n], decoding.WithInFlight(t.InFlight))
}

// inflightBody lets the body's first reservation wait until ctx (the
// request's context, which Budget.Timeout and Close also end) is done.
func (t *Transport) inflightBody(d *decoding.Reader, ctx context.Context) {
	if t.InFlight != nil {
		d.SetInFlightWait(ctx, -1)
	}
}
