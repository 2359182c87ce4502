package probe

import (
	"fmt"

	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/schema"
)

// A ToolFit compares one tool's largest tools/call request with the
// measured identity ceiling.
type ToolFit struct {
	// Name is the tool's name, echoed.
	Name string `json:"name"`
	// WorstRequest is the largest tools/call request in bytes
	// ([schema.RequestWorstCase]); 0 when the input has no ceiling.
	WorstRequest int64 `json:"worst_request_bytes"`
	// Ceiling is the identity ceiling it is compared with: MCP clients
	// send requests uncompressed.
	Ceiling int64 `json:"ceiling"`
	// Fits reports whether WorstRequest plus headroom is at most Ceiling,
	// by [schema.CheckBudget].
	Fits bool `json:"fits"`
	// Unbounded lists where the input has no ceiling.
	Unbounded []string `json:"unbounded,omitempty"`
	// Problem is why the tool does not fit.
	Problem string `json:"problem,omitempty"`
}

// checkTools audits the tools of doc ({"tools": [...]}) with
// [schema.AuditTools] and checks each tool's largest request with
// [schema.CheckBudget] against a budget whose wire and decoded limits are
// the identity ceiling.
func checkTools(doc []byte, id *Ceiling, headroom float64) ([]ToolFit, error) {
	reports, err := schema.AuditTools(doc, schema.Options{})
	if err != nil {
		return nil, err
	}
	ceiling := id.DecodedCeiling
	b := limits.Budget{MaxWireBytes: ceiling, MaxDecodedBytes: ceiling}
	var fits []ToolFit
	for _, r := range reports {
		f := ToolFit{Name: limits.Echo(r.Name), WorstRequest: r.WorstRequest, Ceiling: ceiling}
		for _, fd := range r.Findings {
			f.Unbounded = append(f.Unbounded, limits.EchoPointer(fd.Path)+": "+fd.Kind)
		}
		switch {
		case len(r.Findings) > 0:
			f.Problem = "the input has no ceiling"
		case ceiling == 0:
			// A zero limit would mean the default: no budget describes
			// a path that accepts no body.
			f.Problem = fmt.Sprintf("the largest request is %d bytes; the path accepted no body", r.WorstRequest)
		default:
			if err := schema.CheckBudget(r.WorstRequest, b, headroom); err != nil {
				f.Problem = fmt.Sprintf("the largest request is %d bytes, the measured ceiling %d bytes: %v", r.WorstRequest, ceiling, err)
			}
		}
		f.Fits = f.Problem == ""
		fits = append(fits, f)
	}
	return fits, nil
}
