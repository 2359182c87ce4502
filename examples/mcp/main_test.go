package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/boundhttp/boundhttp/schema"
)

// TestSession drives a real MCP session over loopback: list tools, a
// bounded call, an oversized call answered with an error naming the limit,
// and a result over the client's budget.
func TestSession(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"tools: 2",
		"count: 17 characters, 3 words",
		"oversized count: ", "wire limit exceeded: declared 409", "> limit 262144 bytes",
		"oversized repeat: ", "limit 262144 bytes",
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
	for name, doc := range map[string]string{"count": countSchema, "repeat": repeatSchema} {
		r, err := schema.AuditTool(name, []byte(doc), schema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Check(budget, schema.DefaultHeadroom); err != nil {
			t.Errorf("tool %s: %v", name, err)
		}
	}
	// A cap raised past the budget is caught.
	raised := strings.Replace(countSchema, `"maxLength": 30000`, `"maxLength": 60000`, 1)
	if r, _ := schema.AuditTool("count", []byte(raised), schema.Options{}); r.Check(budget, schema.DefaultHeadroom) == nil {
		t.Errorf("count with maxLength 60000 fits a %d-byte budget; want an error", budget.MaxDecodedBytes)
	}
	// So is a budget tightened beneath the cap.
	tight := budget
	tight.MaxWireBytes = budget.MaxWireBytes / 2
	if r, _ := schema.AuditTool("count", []byte(countSchema), schema.Options{}); r.Check(tight, schema.DefaultHeadroom) == nil {
		t.Errorf("count fits a wire budget of %d; want an error", tight.MaxWireBytes)
	}
	if budget.MaxWireBytes > budget.MaxDecodedBytes {
		t.Errorf("wire budget %d above the decoded budget %d: nobody gets more room by arriving uncompressed", budget.MaxWireBytes, budget.MaxDecodedBytes)
	}
}

// TestCompressedBomb: a gzip request body that expands past the decoded
// limit is answered with a JSON-RPC error naming the decoded limit; the
// SDK never sees it.
func TestCompressedBomb(t *testing.T) {
	h, err := handler(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
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
