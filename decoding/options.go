package decoding

import "fmt"

// An Option changes how a [Reader] accepts a body. Options are applied by
// [NewReader] and [ReadAll], which report the first invalid one.
type Option func(*config) error

type config struct {
	maxMembers int
}

func newConfig(opts []Option) (config, error) {
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
