package probe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
	"github.com/boundhttp/boundhttp/schema"
)

// Input schemas of the hand-written MCP server's tools.
const (
	smallSchema = `{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string","maxLength":10000}}}`
	bigSchema   = `{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string","maxLength":40000}}}`
	freeSchema  = `{"type":"object","additionalProperties":false,"properties":{"text":{"type":"string"}}}`
)

// sseMCP is an MCP server written by hand that answers every request with
// an event stream (after a comment and a notification, as servers may),
// pages tools/list, and records what the probe did.
type sseMCP struct {
	mu        sync.Mutex
	deleted   bool
	noSession int // requests after initialize without the session header
	probes    int // probe bodies received
}

func (s *sseMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Method == http.MethodDelete {
		s.deleted = r.Header.Get("Mcp-Session-Id") == "session-1"
		w.WriteHeader(http.StatusNoContent)
		return
	}
	msg, err := readRPC(r)
	if err != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "Accept", http.StatusBadRequest)
		return
	}
	if msg.Method != "initialize" && (r.Header.Get("Mcp-Session-Id") != "session-1" || r.Header.Get("MCP-Protocol-Version") != "2025-06-18") {
		s.noSession++
	}
	var result string
	switch msg.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "session-1")
		result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sse","version":"v1"}}`
	case "tools/list":
		if msg.Params.Cursor == "" {
			result = fmt.Sprintf(`{"tools":[{"name":"small","inputSchema":%s}],"nextCursor":"page-2"}`, smallSchema)
		} else {
			result = fmt.Sprintf(`{"tools":[{"name":"big","inputSchema":%s},{"name":"free","inputSchema":%s}]}`, bigSchema, freeSchema)
		}
	case "notifications/cancelled":
		s.probes++
		fallthrough
	default:
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, ": hello\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
	fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":%s,\"result\":%s}\n\n", msg.ID, result)
}

// TestMCPByHand measures a hand-written MCP server behind a Middleware
// with a wire limit of 200000 bytes: the tool whose largest request plus
// 25% fits is accepted, the one that does not and the one without a ceiling
// are named with both numbers, and the exit status is 3.
func TestMCPByHand(t *testing.T) {
	t.Parallel()
	const wire = 200000
	s := &sseMCP{}
	srv := httptest.NewServer(boundhttp.Middleware(limits.Budget{MaxWireBytes: wire, MaxDecodedBytes: 256 << 10})(s))
	t.Cleanup(srv.Close)
	code, rep, errs := probe(t, "-mcp", srv.URL)
	if code != ExitNoFit || rep == nil {
		t.Fatalf("exit %d, want %d: %s", code, ExitNoFit, errs)
	}
	checkCeiling(t, "identity", rep.Identity, wire, wire, wire+1, 40)
	checkBoundhttp(t, "identity", rep.Identity.Refusal, "wire", wire, wire+1)
	if rep.Fits || len(rep.Tools) != 3 {
		t.Fatalf("fits %v, tools %+v: want 3 tools, not all fitting", rep.Fits, rep.Tools)
	}
	for i, tc := range []struct {
		name, schema string
		fits         bool
	}{{"small", smallSchema, true}, {"big", bigSchema, false}, {"free", freeSchema, false}} {
		f := rep.Tools[i]
		var worst int64
		if tc.name != "free" {
			var err error
			if worst, err = schema.RequestWorstCase(tc.name, []byte(tc.schema), schema.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		if f.Name != tc.name || f.Fits != tc.fits || f.WorstRequest != worst || f.Ceiling != wire {
			t.Errorf("tool %d: %+v, want %s fits %v, worst %d, ceiling %d", i, f, tc.name, tc.fits, worst, wire)
		}
		if tc.name == "big" && (!strings.Contains(f.Problem, fmt.Sprint(worst)) || !strings.Contains(f.Problem, fmt.Sprint(wire))) {
			t.Errorf("big: problem %q does not name %d and %d", f.Problem, worst, wire)
		}
		if tc.name == "free" && len(f.Unbounded) == 0 {
			t.Errorf("free: no unbounded place named: %+v", f)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Refused bodies never reach the server behind the Middleware.
	if !s.deleted || s.noSession != 0 || s.probes == 0 || s.probes >= rep.Identity.Requests+rep.Gzip.Requests {
		t.Errorf("session deleted %v, %d requests without the session, %d probe bodies for %d+%d requests",
			s.deleted, s.noSession, s.probes, rep.Identity.Requests, rep.Gzip.Requests)
	}
}
