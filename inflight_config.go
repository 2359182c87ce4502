package boundhttp

import (
	"errors"

	"github.com/boundhttp/boundhttp/decoding"
	"github.com/boundhttp/boundhttp/internal/decoder"
	"github.com/boundhttp/boundhttp/limits"
)

// errTwoInFlights refuses a configuration that names two different
// in-flight budgets: the InFlight field and a decoding.WithInFlight option.
var errTwoInFlights = errors.New("decoding.WithInFlight names another in-flight budget than the InFlight field")

// inflightOptions applies a Transport's or Middleware's DecodeOptions and
// its InFlight field. The in-flight budget may be given either way, and
// either way the body behaves the same (it waits for room as the side
// documents, and its charge ends with the body); both ways at once must
// name the same budget. Given neither way, the body is charged to def, the
// side's process-wide default.
func inflightOptions(opts []decoding.Option, f, def *limits.InFlight) (decoder.Config, error) {
	cfg, err := decoder.NewConfig(opts)
	if err != nil {
		return cfg, err
	}
	if f == nil && !cfg.Charges() {
		f = def
	}
	if f != nil {
		if cfg.Charges() && !cfg.SameBudget(f) {
			return cfg, errTwoInFlights
		}
		decoder.WithInFlight(f)(&cfg)
	}
	return cfg, nil
}
