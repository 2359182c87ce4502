package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/schema"
)

// pyString writes s as Python's json.dumps does by default (ensure_ascii):
// every character outside space to tilde as \uXXXX, a surrogate pair
// beyond the Basic Multilingual Plane.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyCount is the tools/call request for count that the Python MCP SDK
// posts (httpx's json= before 0.28: json.dumps with its defaults) for a
// text of n emoji and 8 tags of 32.
func pyCount(n int) string {
	tags := make([]string, 8)
	for i := range tags {
		tags[i] = pyString(strings.Repeat("😀", 32))
	}
	return `{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "count", "arguments": {"text": ` +
		pyString(strings.Repeat("😀", n)) + `, "tags": [` + strings.Join(tags, ", ") + `]}}}`
}

// TestEscapingClientFitsCount pins the trap of a cap audited for UTF-8
// clients only: count with 30,000 characters was audited at 181,887 bytes
// and called fitting, while the Python SDK sent 30,000 emoji as 360,107
// bytes and got a 413. The cap the audit approves must carry the largest
// request such a client sends: that request, made at the schema's
// maxLength, is answered by the tool; at 30,000 characters it is over the
// budget, and so over the audited cap.
func TestEscapingClientFitsCount(t *testing.T) {
	srv := newTestServer(t)
	header := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	post := func(body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header = header.Clone()
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := post(`{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "python", "version": "1"}}}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, resp.Header.Get("Mcp-Session-Id"))
	}
	header.Set("Mcp-Session-Id", resp.Header.Get("Mcp-Session-Id"))
	header.Set("MCP-Protocol-Version", "2025-06-18")
	if resp, _ := post(`{"jsonrpc": "2.0", "method": "notifications/initialized"}`); resp.StatusCode/100 != 2 {
		t.Fatalf("notifications/initialized: %s", resp.Status)
	}

	var doc struct {
		Properties struct{ Text struct{ MaxLength int } }
	}
	if err := json.Unmarshal([]byte(countSchema), &doc); err != nil || doc.Properties.Text.MaxLength == 0 {
		t.Fatalf("count's maxLength: %v", err)
	}
	n := doc.Properties.Text.MaxLength
	r, err := schema.AuditTool("count", []byte(countSchema), schema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	largest := pyCount(n)
	t.Logf("count capped at %d: audited %d bytes; Python's largest request %d bytes; budget %d", n, r.WorstRequest, len(largest), budget.MaxWireBytes)
	if int64(len(largest)) > r.WorstRequest {
		t.Errorf("the audit says %d bytes, Python sends %d", r.WorstRequest, len(largest))
	}
	resp, body := post(largest)
	if want := fmt.Sprintf(`%d characters, 1 words`, n); resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("the largest escaped request (%d bytes): %s %.300s, want 200 with %q", len(largest), resp.Status, body, want)
	}
	over := pyCount(30000)
	if resp, _ := post(over); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("30,000 emoji (%d bytes): %s, want 413", len(over), resp.Status)
	}
}
