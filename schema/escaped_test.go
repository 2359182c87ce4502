package schema

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// countTool is the input schema of examples/mcp's count tool with its text
// capped at n characters.
func countTool(n int) string {
	return fmt.Sprintf(`{"type":"object","additionalProperties":false,"required":["text"],"properties":{
		"text":{"type":"string","maxLength":%d},
		"tags":{"type":"array","maxItems":8,"items":{"type":"string","maxLength":32}}}}`, n)
}

// largestCount is the largest tools/call request of the count tool capped
// at n: every character an emoji, beyond the Basic Multilingual Plane.
func largestCount(n int) map[string]any {
	tags := make([]any, 8)
	for i := range tags {
		tags[i] = strings.Repeat("😀", 32)
	}
	return map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "count", "arguments": map[string]any{"text": strings.Repeat("😀", n), "tags": tags}}}
}

// TestRequestWorstCaseCoversEscapingClients pins the trap of sizing strings
// for UTF-8 only: the Python MCP SDK posts with httpx's json=, which before
// httpx 0.28 writes json.dumps with ensure_ascii, 12 bytes for an emoji
// (\ud83d\ude00), not 4. The count tool capped at 30,000 characters was
// audited at 181,887 bytes while a Python client sent 360,107 and met a
// 413. For each cap, the largest request as that client writes it must fit
// the default bound; as a UTF-8 client writes it, the UTF8 bound, which is
// below the escaped size (so UTF8 is no default). When python3 is
// installed, json.dumps itself writes the escaped form, byte for byte.
func TestRequestWorstCaseCoversEscapingClients(t *testing.T) {
	t.Parallel()
	python, _ := exec.LookPath("python3")
	if python == "" {
		t.Log("python3 not installed: the escaped form is checked as Go writes it only")
	}
	for _, n := range []int{0, 1, 2, 1000, 16000, 30000} {
		doc := []byte(countTool(n))
		req := largestCount(n)
		escaped := escapeNonASCII(pythonJSON(req))
		plain := pythonJSON(req)
		if python != "" {
			raw, _ := json.Marshal(req)
			cmd := exec.Command(python, "-c", "import json, sys; sys.stdout.write(json.dumps(json.loads(sys.stdin.read())))")
			cmd.Stdin = strings.NewReader(string(raw))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("python3: %v", err)
			}
			if string(out) != escaped {
				t.Fatalf("cap %d: json.dumps writes %d bytes, the test's escaped form %d", n, len(out), len(escaped))
			}
		}
		def, err := RequestWorstCase("count", doc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		utf8, err := RequestWorstCase("count", doc, Options{UTF8: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := AuditTool("count", doc, Options{})
		if err != nil || r.WorstRequest != def {
			t.Errorf("cap %d: AuditTool = %+v, %v; want the worst request %d", n, r, err, def)
		}
		t.Logf("cap %6d: escaped request %7d bytes, default bound %7d; UTF-8 request %7d, UTF8 bound %7d", n, len(escaped), def, len(plain), utf8)
		if def < int64(len(escaped)) {
			t.Errorf("cap %d: the default bound %d is below the request a Python client sends, %d bytes", n, def, len(escaped))
		}
		if utf8 < int64(len(plain)) {
			t.Errorf("cap %d: the UTF8 bound %d is below the request a UTF-8 client sends, %d bytes", n, utf8, len(plain))
		}
		if n >= 1000 && utf8 >= int64(len(escaped)) {
			t.Errorf("cap %d: the UTF8 bound %d covers the escaped request (%d bytes): the test no longer tells the sizings apart", n, utf8, len(escaped))
		}
	}
}
