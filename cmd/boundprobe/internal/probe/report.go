package probe

// A Report is what one run measured; -json prints it as it is.
type Report struct {
	URL         string `json:"url"`
	Method      string `json:"method"`
	ContentType string `json:"content_type"`
	// Identity is the ceiling for bodies sent as they are.
	Identity *Ceiling `json:"identity"`
	// Gzip is the ceiling for gzip bodies, searched by decoded size.
	Gzip *Ceiling `json:"gzip"`
	// Headroom is the fraction added to each tool's largest request
	// (with -mcp).
	Headroom float64 `json:"headroom,omitempty"`
	// Tools is every tool's largest request against the identity ceiling
	// (with -mcp).
	Tools []ToolFit `json:"tools,omitempty"`
	// Fits reports whether every tool fits; true without -mcp.
	Fits bool `json:"fits"`
}

// A Ceiling is the result of one search.
type Ceiling struct {
	// Ceiling is the wire size in bytes of the largest accepted body; 0
	// when none was.
	Ceiling int64 `json:"ceiling"`
	// DecodedCeiling is its size after content decoding (equal to Ceiling
	// for identity bodies).
	DecodedCeiling int64 `json:"decoded_ceiling"`
	// Exact reports whether the body one decoded byte larger was refused.
	Exact bool `json:"exact"`
	// RefusedAt is the size of the smallest refused body; nil when none
	// was, up to -max-size or until -max-requests ran out (Note says
	// which).
	RefusedAt *Size `json:"refused_at,omitempty"`
	// Requests is the number of bodies sent.
	Requests int `json:"requests"`
	// Accepted is the answer to the largest accepted body.
	Accepted *Answer `json:"accepted,omitempty"`
	// Refusal is the answer to the smallest refused body: ceiling+1 when
	// Exact.
	Refusal *Answer `json:"refusal,omitempty"`
	// Note says why the ceiling is not exact.
	Note string `json:"note,omitempty"`
}

// A Size is the size of one body in bytes, on the wire and decoded.
type Size struct {
	Wire    int64 `json:"wire"`
	Decoded int64 `json:"decoded"`
}
