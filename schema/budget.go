package schema

import (
	"fmt"
	"math"

	"github.com/boundhttp/boundhttp/limits"
)

// DefaultHeadroom is the headroom [CheckBudget] is usually called with: the
// largest request must fit the limits with 25% to spare, for whitespace,
// extra _meta members and encoders the assumptions of [Options] miss.
const DefaultHeadroom = 0.25

// Allowances for the parts of a tools/call request that the tool's schema
// does not describe.
const (
	// IDBytes is the largest JSON-RPC id assumed: a string of 62 ASCII
	// characters, or any number.
	IDBytes = 64
	// MetaBytes is the largest params._meta member assumed: what the MCP
	// Go SDK client adds to every request from protocol 2026-07-28 (the
	// protocol version, the client's capabilities and its info: about 180
	// bytes for a default client, about 400 for one with sampling and
	// elicitation handlers, a title, a website and a one-line
	// description), and a progress token. A client info with a description
	// of more than about 600 characters, icons or experimental
	// capabilities is not covered, nor are the inputResponses and
	// requestState a client sends back when it retries a call the server
	// answered with input requests: their size is the server's own choice.
	MetaBytes = 1024
)

// RequestWorstCase returns the largest size in bytes of the JSON-RPC
// tools/call request that carries arguments valid against the inputSchema
// doc of the tool named tool:
//
//	{"jsonrpc": "2.0", "id": ID, "method": "tools/call", "params": {"name": TOOL, "arguments": ARGS, "_meta": META}}
//
// with [IDBytes] and [MetaBytes] allowed for ID and META.
func RequestWorstCase(tool string, doc []byte, o Options) (int64, error) {
	args, err := WorstCase(doc, o)
	if err != nil {
		return 0, err
	}
	return requestSize(tool, args, o), nil
}

func requestSize(tool string, args int64, o Options) int64 {
	const envelope = `{"jsonrpc": "2.0", "id": , "method": "tools/call", "params": {"name": , "arguments": , "_meta": }}`
	w := &walker{o: o}
	return add(int64(len(envelope)), IDBytes, w.stringValue(tool), args, MetaBytes)
}

// CheckBudget reports an error when a request of worst bytes, plus
// headroom (a fraction: 0.25 is 25%), does not fit the wire, decoded and
// character limits of b (defaults applied). The error names both numbers.
// Assert this relationship rather than the numbers themselves: a cap the
// transport cannot carry, or a transport tightened beneath the cap, fails.
// [ToolReport.Check] is this check for an audited tool: it refuses a tool
// with findings, then calls CheckBudget with the tool's WorstRequest.
func CheckBudget(worst int64, b limits.Budget, headroom float64) error {
	if err := b.Validate(); err != nil {
		return err
	}
	if headroom < 0 {
		return fmt.Errorf("schema: negative headroom %v", headroom)
	}
	if math.IsNaN(headroom) || math.IsInf(headroom, 0) {
		return fmt.Errorf("schema: invalid headroom %v", headroom)
	}
	b = b.WithDefaults()
	// The extra bytes, rounded up, saturate: a float64 beyond int64 does
	// not convert to one, and a need that saturates fits no limit.
	need := int64(unbounded)
	if extra := float64(worst)*headroom + 0.999999; extra < math.MaxInt64 {
		need = add(worst, int64(extra))
	}
	check := []struct {
		name  string
		limit int64
	}{{"MaxWireBytes", b.MaxWireBytes}, {"MaxDecodedBytes", b.MaxDecodedBytes}}
	if b.MaxDecodedRunes > 0 {
		check = append(check, struct {
			name  string
			limit int64
		}{"MaxDecodedRunes", b.MaxDecodedRunes})
	}
	for _, c := range check {
		if need > c.limit || need == unbounded {
			return fmt.Errorf("schema: the largest valid request is %d bytes (%d with %.0f%% headroom), above Budget.%s of %d",
				worst, need, headroom*100, c.name, c.limit)
		}
	}
	return nil
}
