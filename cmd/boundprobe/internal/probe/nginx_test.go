package probe

import (
	"net/http"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/cmd/boundprobe/internal/peer"
	"github.com/boundhttp/boundhttp/limits"
)

// TestNginxInFront measures nginx (client_max_body_size 1m) in front of a
// Middleware with a 4 MiB limit: the identity ceiling is nginx's 1 MiB,
// answered by nginx's HTML page, and the Middleware's wire limit can never
// be reached; gzip bodies pass nginx and meet the Middleware's decoded
// limit.
func TestNginxInFront(t *testing.T) {
	t.Parallel()
	const limit = 4 << 20
	url := peer.Nginx(t, "1m", backend(t, limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit}))
	code, rep, errs := probe(t, url+"/mcp")
	if code != ExitFit || rep == nil {
		t.Fatalf("exit %d, want %d: %s", code, ExitFit, errs)
	}
	const ceiling = 1 << 20
	checkCeiling(t, "identity", rep.Identity, ceiling, ceiling, ceiling+1, 40)
	if a := rep.Identity.Refusal; a == nil || a.Outcome != OutcomeAnswered || a.By != ByOther || a.Status != http.StatusRequestEntityTooLarge ||
		!strings.HasPrefix(a.Server, "nginx") || !strings.HasPrefix(a.ContentType, "text/html") || a.Title != "413 Request Entity Too Large" {
		t.Errorf("identity refusal: %+v, want nginx's HTML 413", a)
	}
	gz := shape{json: true, gzip: true}
	checkCeiling(t, "gzip", rep.Gzip, wireOf(t, gz, limit), limit, wireOf(t, gz, limit+1), 40)
	checkBoundhttp(t, "gzip", rep.Gzip.Refusal, "decoded", limit, limit+1)
}
