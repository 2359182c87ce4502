package decoding

import (
	"fmt"

	"github.com/boundhttp/boundhttp/limits"
)

// An Option changes how a [Reader] accepts a body. Options are applied by
// [NewReader] and [ReadAll], which report the first invalid one.
type Option func(*config) error

type config struct {
	maxMembers      int
	requireChecksum bool
	inflight        *limits.InFlight // see WithInFlight
}

func newConfig(opts []Option) (config, error) {
	if len(opts) == 0 {
		// Without options nothing escapes: the config the options would
		// be applied to costs an allocation per body.
		return config{maxMembers: 1}, nil
	}
	return applyOptions(opts)
}

func applyOptions(opts []Option) (config, error) {
	c := config{maxMembers: 1}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// WithMaxMembers allows up to n concatenated gzip members, and up to n zstd
// frames (skippable frames included), in one layer. All of them are charged
// against the one decoded total of the budget; the cap exists because empty
// members cost CPU and produce nothing. The default is 1: a second member or
// frame is rejected with [limits.StageIntegrity]. Zero means the default;
// negative is an error.
func WithMaxMembers(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("decoding: WithMaxMembers(%d): negative", n)
		}
		if n == 0 {
			n = 1
		}
		c.maxMembers = n
		return nil
	}
}

// WithRequireChecksum accepts only bodies whose every content-coding
// verifies the decoded bytes with a checksum: gzip (CRC-32 and length per
// member), deflate (the zlib format's Adler-32) and zstd frames that carry
// their content checksum. A zstd frame without the checksum flag, any br
// stream (brotli has no checksum) and a body of one byte or more with no
// content-coding at all (identity has nothing to verify) are rejected with
// [limits.StageIntegrity] before their content is decoded. A body of zero
// wire bytes is empty under any coding and passes. The default is off: such
// bodies are accepted on the strength of their own stream structure (see
// the package documentation for what each coding verifies).
func WithRequireChecksum() Option {
	return func(c *config) error {
		c.requireChecksum = true
		return nil
	}
}
