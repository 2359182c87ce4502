package schema

import (
	"fmt"
	"strconv"

	"github.com/boundhttp/boundhttp/limits"
)

// A ToolReport is the audit of one tool's inputSchema.
type ToolReport struct {
	Name string `json:"name"`
	// Findings are the unbounded places, with paths into the document
	// given to [AuditTools].
	Findings []Finding `json:"findings,omitempty"`
	// WorstRequest is the largest tools/call request for the tool
	// ([RequestWorstCase]); zero when Findings is not empty.
	WorstRequest int64 `json:"worst_request_bytes,omitempty"`
}

// Check returns an error, naming the tool, when its input has no ceiling
// (the findings), or when its largest request with headroom does not fit
// b: [CheckBudget] of WorstRequest, whose error it wraps.
func (r ToolReport) Check(b limits.Budget, headroom float64) error {
	if len(r.Findings) > 0 {
		return fmt.Errorf("tool %q: %w", limits.Echo(r.Name), unboundedError(r.Findings))
	}
	if err := CheckBudget(r.WorstRequest, b, headroom); err != nil {
		return fmt.Errorf("tool %q: %w", limits.Echo(r.Name), err)
	}
	return nil
}

// AuditTools audits every tool of a tools/list result: either the result
// object {"tools": [...]} or the whole JSON-RPC response {"result":
// {"tools": [...]}}. Each inputSchema is its own document for $ref.
func AuditTools(doc []byte, o Options) ([]ToolReport, error) {
	v, err := parse(doc)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	prefix := ""
	if res, ok := m["result"].(map[string]any); ok {
		m, prefix = res, "/result"
	}
	tools, ok := m["tools"].([]any)
	if !ok {
		return nil, fmt.Errorf("schema: no tools list in the document")
	}
	var reports []ToolReport
	for i, t := range tools {
		tm, _ := t.(map[string]any)
		name, _ := tm["name"].(string)
		r := auditTool(name, tm["inputSchema"], o)
		base := prefix + "/tools/" + strconv.Itoa(i) + "/inputSchema"
		for j := range r.Findings {
			if r.Findings[j].Path == "/" {
				r.Findings[j].Path = base
			} else {
				r.Findings[j].Path = base + r.Findings[j].Path
			}
		}
		reports = append(reports, r)
	}
	return reports, nil
}

// AuditTool audits the inputSchema doc of the tool named name.
func AuditTool(name string, doc []byte, o Options) (ToolReport, error) {
	v, err := parse(doc)
	if err != nil {
		return ToolReport{}, err
	}
	return auditTool(name, v, o), nil
}

func auditTool(name string, schema any, o Options) ToolReport {
	r := ToolReport{Name: name}
	n, findings := walk(schema, o)
	if n == unbounded {
		r.Findings = findings
	} else {
		r.WorstRequest = requestSize(name, n, o)
	}
	return r
}
