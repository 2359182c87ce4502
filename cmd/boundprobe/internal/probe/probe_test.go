package probe

import (
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestMiddlewareAlone measures a Middleware with a wire limit of 314159
// bytes and a decoded limit of 1 MiB: the identity ceiling is the wire
// limit, the gzip search reaches the decoded limit, and both refusals are
// the Middleware's problem documents.
func TestMiddlewareAlone(t *testing.T) {
	t.Parallel()
	const wire, decoded = 314159, 1 << 20
	url := backend(t, limits.Budget{MaxWireBytes: wire, MaxDecodedBytes: decoded})
	code, rep, errs := probe(t, url)
	if code != ExitFit || rep == nil {
		t.Fatalf("exit %d, want %d: %s", code, ExitFit, errs)
	}
	checkCeiling(t, "identity", rep.Identity, wire, wire, wire+1, 40)
	// A declared Content-Length over the limit is refused before a byte is
	// read: observed is the declared size.
	checkBoundhttp(t, "identity", rep.Identity.Refusal, "wire", wire, wire+1)
	gz := shape{json: true, gzip: true}
	checkCeiling(t, "gzip", rep.Gzip, wireOf(t, gz, decoded), decoded, wireOf(t, gz, decoded+1), 40)
	checkBoundhttp(t, "gzip", rep.Gzip.Refusal, "decoded", decoded, decoded+1)
	if !rep.Fits || rep.Tools != nil {
		t.Errorf("fits %v, tools %v: want true and none without -mcp", rep.Fits, rep.Tools)
	}
}
