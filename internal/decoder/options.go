package decoder

import (
	"fmt"

	"github.com/boundhttp/boundhttp/internal/inflight"
	"github.com/boundhttp/boundhttp/limits"
)

// An Option changes how a [Reader] accepts a body; decoding.Option is the
// public form of the same function type.
type Option func(*Config) error

// Config is what the options of a body decided: validated once, then
// shared by any number of Readers. The zero Config is not valid; use
// [NewConfig].
type Config struct {
	maxMembers      int
	requireChecksum bool
	pool            *inflight.Pool // see WithInFlight; nil: none
}

// NewConfig applies opts (nil ones are skipped) to the default Config and
// returns it, or the first option's error. O is [Option] or
// decoding.Option.
func NewConfig[O ~func(*Config) error](opts []O) (Config, error) {
	if len(opts) == 0 {
		// Without options nothing escapes: the Config the options would
		// be applied to costs an allocation per body.
		return Config{maxMembers: 1}, nil
	}
	c := Config{maxMembers: 1}
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

// Charges reports whether bodies of c charge an in-flight budget.
func (c *Config) Charges() bool { return c.pool != nil }

// Pool returns the in-flight budget's accounting the bodies charge, or nil.
func (c *Config) Pool() *inflight.Pool { return c.pool }

// SameBudget reports whether bodies of c charge the in-flight budget f
// (nil: none).
func (c *Config) SameBudget(f *limits.InFlight) bool { return c.pool == inflight.Of(f) }

// WithInFlight: see decoding.WithInFlight.
func WithInFlight(f *limits.InFlight) Option {
	return func(c *Config) error {
		c.pool = inflight.Of(f)
		return nil
	}
}

// WithMaxMembers: see decoding.WithMaxMembers.
func WithMaxMembers(n int) Option {
	return func(c *Config) error {
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

// WithRequireChecksum: see decoding.WithRequireChecksum.
func WithRequireChecksum() Option {
	return func(c *Config) error {
		c.requireChecksum = true
		return nil
	}
}
