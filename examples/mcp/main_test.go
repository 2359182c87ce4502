package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/boundhttp/boundhttp/schema"
)

// TestSession drives a real MCP session over loopback: list tools, a
// bounded call, an oversized call answered with an error naming the limit,
// a result over the client's budget cut by the server and read back whole
// through its link, and a list paged, its largest page saved to a file by
// the client.
func TestSession(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"tools: 3",
		"count: 17 characters, 3 words",
		"oversized count: ", "wire limit exceeded: declared 409", "> limit 262144 bytes",
		"repeat 300000: 20000 characters in context, [truncated: showing 19712 of 300000 characters\n",
		"repeat 300000: link of 300000 bytes read back: 300000 characters, whole: true",
		`items: [page: items 1-20 of 1000; 980 remain: call again with cursor "`,
		"items next: [page: items 21-40 of 1000; 960 remain",
		"items limit 101: error true: limit 101: must be between 1 and 100",
		"items limit 100: saved by the client (15202 characters, 15202 bytes) because it is 15202 characters, over the limit of 10000 characters",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("session output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestCapsFitTheTransport asserts the relations between the numbers, not
// the numbers: the tool's largest request fits the budget with headroom,
// and the SDK's own body cap is the budget's, not a second limit nobody
// chose.
func TestCapsFitTheTransport(t *testing.T) {
	for name, doc := range toolSchemas() {
		r, err := schema.AuditTool(name, []byte(doc), schema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Check(budget, schema.DefaultHeadroom); err != nil {
			t.Errorf("tool %s: %v", name, err)
		}
	}
	// A cap raised past the budget is caught.
	raised := strings.Replace(countSchema, `"maxLength": 16000`, `"maxLength": 30000`, 1)
	if r, _ := schema.AuditTool("count", []byte(raised), schema.Options{}); raised == countSchema || r.Check(budget, schema.DefaultHeadroom) == nil {
		t.Errorf("count with maxLength 30000 fits a %d-byte budget; want an error", budget.MaxDecodedBytes)
	}
	// So is a budget tightened beneath the cap.
	tight := budget
	tight.MaxWireBytes = budget.MaxWireBytes / 2
	if r, _ := schema.AuditTool("count", []byte(countSchema), schema.Options{}); r.Check(tight, schema.DefaultHeadroom) == nil {
		t.Errorf("count fits a wire budget of %d; want an error", tight.MaxWireBytes)
	}
	// The items tool's limit has the maximum the server enforces, and the
	// audit sees it: without it the schema has an unbounded integer.
	if r, _ := schema.AuditTool("items", []byte(itemsSchema), schema.Options{}); len(r.Findings) != 0 {
		t.Errorf("items schema findings: %v", r.Findings)
	}
	unbounded := strings.Replace(itemsSchema, `"maximum": 100,`, ``, 1)
	if r, _ := schema.AuditTool("items", []byte(unbounded), schema.Options{}); unbounded == itemsSchema || (len(r.Findings) == 0 && r.WorstRequest <= mustWorst(t, "items", itemsSchema)) {
		t.Errorf("dropping the limit's maximum did not change the audit")
	}
	// A capped result, or a page of a kept one, fits the client's budget:
	// a character is at most 6 bytes of JSON (an escaped control
	// character), plus the envelope.
	if worst := int64(6*serverLimits.MaxResultChars + 4096); worst > budget.MaxDecodedBytes || worst > budget.MaxWireBytes {
		t.Errorf("a result of %d characters may take %d bytes, over the %d-byte budget", serverLimits.MaxResultChars, worst, budget.MaxDecodedBytes)
	}
	if budget.MaxWireBytes > budget.MaxDecodedBytes {
		t.Errorf("wire budget %d above the decoded budget %d: nobody gets more room by arriving uncompressed", budget.MaxWireBytes, budget.MaxDecodedBytes)
	}
}

// mustWorst returns the audited worst request of a tool.
func mustWorst(t *testing.T, name, doc string) int64 {
	t.Helper()
	r, err := schema.AuditTool(name, []byte(doc), schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r.WorstRequest
}

// TestCompressedBomb: a gzip request body that expands past the decoded
// limit is answered with a JSON-RPC error naming the decoded limit; the
// SDK never sees it.
func TestCompressedBomb(t *testing.T) {
	srv := newTestServer(t)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count","arguments":{"text":"` + strings.Repeat("a", 1<<20) + `"}}}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(call))
	zw.Close()
	req, _ := http.NewRequest("POST", srv.URL, &gz)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var msg struct {
		Error struct {
			Message string
			Data    struct {
				Stage string
				Limit int64
			}
		}
	}
	json.NewDecoder(resp.Body).Decode(&msg)
	if resp.StatusCode != 413 || msg.Error.Data.Stage != "decoded" || msg.Error.Data.Limit != budget.MaxDecodedBytes ||
		!strings.Contains(msg.Error.Message, "limit 262144") {
		t.Errorf("gzip bomb tools/call: %d %+v, want 413 with a JSON-RPC error naming the decoded limit", resp.StatusCode, msg)
	}
}

// TestShapeCheckedWhateverTheContentType: the MCP endpoint takes nothing but
// JSON, so a too-deep document is refused even when the client declares
// text/plain or no Content-Type at all (MiddlewareConfig.JSONAlways).
func TestShapeCheckedWhateverTheContentType(t *testing.T) {
	srv := newTestServer(t)
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	for _, ct := range []string{"", "text/plain", "application/json; charset"} {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(deep))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		} else {
			req.Header["Content-Type"] = nil
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			Error struct{ Data struct{ Stage, Field string } }
		}
		json.NewDecoder(resp.Body).Decode(&msg)
		resp.Body.Close()
		if resp.StatusCode != 413 || msg.Error.Data.Stage != "json" || msg.Error.Data.Field != "MaxDepth" {
			t.Errorf("Content-Type %q: %d %+v, want 413 stage json, field MaxDepth", ct, resp.StatusCode, msg.Error.Data)
		}
	}
}
