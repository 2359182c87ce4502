package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/cmd/boundprobe/internal/peer"
	"github.com/boundhttp/boundhttp/cmd/boundprobe/internal/probe"
	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/schema"
)

// Input schemas: the largest request of "fits" plus 25% is under nginx's
// 1 MiB, that of "too_big" is not (a character may take 12 bytes of JSON,
// an emoji escaped as a surrogate pair).
const (
	fitsSchema   = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":50000}}}`
	tooBigSchema = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":100000}}}`
)

// sdkServer returns the SDK's streamable HTTP handler (JSON answers) with
// the tool "fits" and, if tooBig, the tool "too_big", behind a Middleware
// with budget.
func sdkServer(budget limits.Budget, tooBig bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe-target", Version: "v1.0.0"}, nil)
	echo := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	s.AddTool(&mcp.Tool{Name: "fits", InputSchema: json.RawMessage(fitsSchema)}, echo)
	if tooBig {
		s.AddTool(&mcp.Tool{Name: "too_big", InputSchema: json.RawMessage(tooBigSchema)}, echo)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: true})
	return boundhttp.Middleware(budget)(h)
}

// TestSDKBehindNginx probes the SDK's server behind nginx
// (client_max_body_size 1m) and the Middleware: the identity ceiling is
// nginx's 1,048,576 bytes, the gzip search reaches the Middleware's decoded
// limit, and the tool whose largest request does not fit 1 MiB with 25%
// headroom is named with both numbers; exit 3.
func TestSDKBehindNginx(t *testing.T) {
	t.Parallel()
	backend := httptest.NewServer(sdkServer(limits.Budget{MaxWireBytes: 4 << 20, MaxDecodedBytes: 4 << 20}, true))
	t.Cleanup(backend.Close)
	url := peer.Nginx(t, "1m", backend.URL) + "/mcp"

	var out, errs bytes.Buffer
	code := probe.Main(context.Background(), []string{"-mcp", "-json", "-pause", "0", url}, &out, &errs)
	if code != probe.ExitNoFit {
		t.Fatalf("exit %d, want %d: %s\n%s", code, probe.ExitNoFit, errs.String(), out.String())
	}
	var rep probe.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	const ceiling = 1 << 20
	id := rep.Identity
	if id.Ceiling != ceiling || id.DecodedCeiling != ceiling || !id.Exact || id.RefusedAt == nil || id.RefusedAt.Wire != ceiling+1 || id.Requests > 40 {
		t.Errorf("identity: %+v, want ceiling %d exact", id, ceiling)
	}
	if a := id.Refusal; a == nil || a.Status != http.StatusRequestEntityTooLarge || a.By != probe.ByOther || !strings.HasPrefix(a.Server, "nginx") {
		t.Errorf("identity refusal %+v, want nginx's 413", a)
	}
	if a := id.Accepted; a == nil || a.Status != http.StatusAccepted {
		t.Errorf("identity accepted answer %+v, want the SDK's 202 for a notification", a)
	}
	gz := rep.Gzip
	const decoded = 4 << 20
	if gz.DecodedCeiling != decoded || !gz.Exact || gz.RefusedAt == nil || gz.RefusedAt.Decoded != decoded+1 || gz.Ceiling <= 0 || gz.Ceiling >= ceiling {
		t.Errorf("gzip: %+v, want decoded ceiling %d exact", gz, decoded)
	}
	if a := gz.Refusal; a == nil || a.By != probe.ByBoundhttp || a.Stage != "decoded" || a.Limit == nil || *a.Limit != decoded {
		t.Errorf("gzip refusal %+v, want the Middleware's stage decoded, limit %d", a, decoded)
	}
	t.Logf("identity %d in %d requests; gzip %d wire / %d decoded in %d requests", id.Ceiling, id.Requests, gz.Ceiling, gz.DecodedCeiling, gz.Requests)

	if len(rep.Tools) != 2 || rep.Fits {
		t.Fatalf("tools %+v, fits %v: want 2 tools, not all fitting", rep.Tools, rep.Fits)
	}
	for _, f := range rep.Tools {
		doc, wantFit := fitsSchema, true
		if f.Name == "too_big" {
			doc, wantFit = tooBigSchema, false
		}
		worst, err := schema.RequestWorstCase(f.Name, []byte(doc), schema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if f.WorstRequest != worst || f.Ceiling != ceiling || f.Fits != wantFit {
			t.Errorf("tool %+v: want worst %d, ceiling %d, fits %v", f, worst, ceiling, wantFit)
		}
		if !wantFit && (!strings.Contains(f.Problem, fmt.Sprint(worst)) || !strings.Contains(f.Problem, fmt.Sprint(ceiling))) {
			t.Errorf("tool %s: problem %q does not name %d and %d", f.Name, f.Problem, worst, ceiling)
		}
		t.Logf("tool %s: worst %d, fits %v %s", f.Name, f.WorstRequest, f.Fits, f.Problem)
	}
}

// TestSDKAlone probes the SDK's server with the tool "fits" only, behind a
// Middleware with a limit of 800000 bytes: the identity ceiling is that
// limit, which the tool's largest request plus 25% (750385) fits; exit 0.
func TestSDKAlone(t *testing.T) {
	t.Parallel()
	const limit = 800000
	backend := httptest.NewServer(sdkServer(limits.Budget{MaxWireBytes: limit, MaxDecodedBytes: limit}, false))
	t.Cleanup(backend.Close)
	var out, errs bytes.Buffer
	code := probe.Main(context.Background(), []string{"-mcp", "-json", "-pause", "0", backend.URL + "/mcp"}, &out, &errs)
	if code != probe.ExitFit {
		t.Fatalf("exit %d, want %d: %s\n%s", code, probe.ExitFit, errs.String(), out.String())
	}
	var rep probe.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Identity; c.Ceiling != limit || c.DecodedCeiling != limit || !c.Exact || c.RefusedAt == nil || c.RefusedAt.Wire != limit+1 || c.Refusal == nil || c.Refusal.Stage != "wire" || *c.Refusal.Limit != limit {
		t.Errorf("identity: %+v, want %d exact, the Middleware's stage wire", c, limit)
	}
	if len(rep.Tools) != 1 || !rep.Fits || !rep.Tools[0].Fits || rep.Tools[0].Ceiling != limit {
		t.Errorf("tools %+v: want fits fitting %d", rep.Tools, limit)
	}
}
