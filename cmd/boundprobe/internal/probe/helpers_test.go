package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// probe runs the command with args and -json -pause 0, and returns its exit
// status, its report (nil if none was printed) and its diagnostics.
func probe(t *testing.T, args ...string) (int, *Report, string) {
	t.Helper()
	var out, errs bytes.Buffer
	code := Main(context.Background(), append([]string{"-json", "-pause", "0"}, args...), &out, &errs)
	if out.Len() == 0 {
		return code, nil, errs.String()
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, out.Bytes())
	}
	// The members scripts rely on: identity and gzip, each with an
	// integer ceiling.
	var pinned map[string]map[string]any
	json.Unmarshal(out.Bytes(), &pinned)
	for _, k := range []string{"identity", "gzip"} {
		if n, ok := pinned[k]["ceiling"].(float64); !ok || n != float64(int64(n)) {
			t.Errorf("JSON %s.ceiling is %v, want an integer", k, pinned[k]["ceiling"])
		}
	}
	return code, &rep, errs.String()
}

// backend starts b's Middleware in front of a handler that answers 200.
func backend(t *testing.T, b limits.Budget) string {
	t.Helper()
	h := boundhttp.Middleware(b)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// wireOf returns the wire size of the body of shape s with decoded size n.
func wireOf(t *testing.T, s shape, n int64) int64 {
	t.Helper()
	b, err := newBody(s, n)
	if err != nil {
		t.Fatal(err)
	}
	return b.Wire
}

// checkCeiling compares a search's figures with the configured ones: the
// ceiling (wire and decoded), exactness, the size refused and the request
// budget.
func checkCeiling(t *testing.T, name string, c *Ceiling, wire, decoded, refusedWire int64, maxRequests int) {
	t.Helper()
	if c == nil {
		t.Fatalf("%s: no result", name)
	}
	if c.Ceiling != wire || c.DecodedCeiling != decoded || !c.Exact {
		t.Errorf("%s: ceiling %d (decoded %d, exact %v), want %d (decoded %d, exact)", name, c.Ceiling, c.DecodedCeiling, c.Exact, wire, decoded)
	}
	if c.RefusedAt == nil || c.RefusedAt.Decoded != decoded+1 || c.RefusedAt.Wire != refusedWire {
		t.Errorf("%s: refused at %+v, want wire %d decoded %d", name, c.RefusedAt, refusedWire, decoded+1)
	}
	if c.Requests < 1 || c.Requests > maxRequests {
		t.Errorf("%s: %d requests, want 1 to %d", name, c.Requests, maxRequests)
	}
	if c.Accepted == nil || c.Accepted.Status/100 != 2 {
		t.Errorf("%s: accepted answer %+v, want 2xx", name, c.Accepted)
	}
	t.Logf("%s: ceiling %d wire, %d decoded, %d requests, refused by %s", name, c.Ceiling, c.DecodedCeiling, c.Requests, describe(c.Refusal))
}

// checkBoundhttp checks that a was a boundhttp problem document of stage
// with the limit and observed given.
func checkBoundhttp(t *testing.T, name string, a *Answer, stage string, limit, observed int64) {
	t.Helper()
	if a == nil || a.Outcome != OutcomeAnswered || a.By != ByBoundhttp || a.Status != http.StatusRequestEntityTooLarge ||
		a.Stage != stage || a.Limit == nil || *a.Limit != limit || a.Observed == nil || *a.Observed != observed {
		t.Errorf("%s: refusal %s, want a boundhttp problem, 413, stage %s, limit %d, observed %d", name, describe(a), stage, limit, observed)
	}
}

// An rpcRequest is what the hand-written MCP servers of the tests read of
// a JSON-RPC message.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Cursor string `json:"cursor"`
	} `json:"params"`
}

// readRPC decodes the JSON-RPC message of r's body. Like the TypeScript
// SDK, it refuses "params": null (params may be omitted, never null).
func readRPC(r *http.Request) (rpcRequest, error) {
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		return rpcRequest{}, err
	}
	if p, ok := raw["params"]; ok && string(p) == "null" {
		return rpcRequest{}, errors.New(`"params": null`)
	}
	var msg rpcRequest
	json.Unmarshal(raw["id"], &msg.ID)
	json.Unmarshal(raw["method"], &msg.Method)
	json.Unmarshal(raw["params"], &msg.Params)
	return msg, nil
}
