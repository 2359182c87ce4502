package testenc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The official TypeScript SDK's client, run by node against an MCP server
// on loopback: what it hands its caller is what the server meant.

// tsCall is the script of the TS client: it lists the tools (so that it
// knows their output schemas and validates structured content, as it does
// in use), calls each tool named in argv[3...] on the server at argv[2]
// and prints, for each, what callTool returned or the error it threw. For
// a result that names a mcpbound link in its text it then reads the pages
// following only URIs found in content text, never _meta, and reports the
// data joined (the contents without the navigation note) and each page's
// texts.
const tsCall = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [url, ...tools] = process.argv.slice(2);
const client = new Client({ name: "ts-agent", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.listTools();
const uriRE = /mcpbound:\/\/result\/[0-9a-f]{32}(\?page=[0-9]+)?/g;
const out = {};
for (const name of tools) {
  const r = {};
  try {
    r.result = await client.callTool({ name, arguments: {} });
  } catch (e) {
    r.error = String(e && e.message || e);
    out[name] = r;
    continue;
  }
  const text = r.result.content.filter(c => c.type === "text").map(c => c.text).join("\n");
  const first = text.match(uriRE);
  if (first) {
    r.pages = [];
    r.data = "";
    const seen = new Set();
    let uri = first[0];
    for (let i = 0; i < 200 && uri; i++) {
      seen.add(uri);
      const page = await client.readResource({ uri });
      r.pages.push(page.contents.map(c => c.text));
      r.data += page.contents.filter(c => !(c._meta && c._meta["mcpbound/navigation"])).map(c => c.text).join("");
      uri = undefined;
      for (const c of page.contents) {
        for (const m of (c.text || "").matchAll(uriRE)) {
          if (!seen.has(m[0])) { uri = uri || m[0]; }
        }
      }
    }
  }
  out[name] = r;
}
await client.close();
process.stdout.write(JSON.stringify(out));
`

// TSOutcome is what the script printed for one tool.
type TSOutcome struct {
	Error  string `json:"error"`
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			URI  string `json:"uri"`
		} `json:"content"`
	} `json:"result"`
	Pages [][]string `json:"pages"`
	Data  string     `json:"data"`
}

// Text returns the text blocks of the outcome's result joined by "\n".
func (o TSOutcome) Text() string {
	var parts []string
	for _, c := range o.Result.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Link returns the URI of the outcome's resource_link, if any.
func (o TSOutcome) Link() string {
	for _, c := range o.Result.Content {
		if c.Type == "resource_link" {
			return c.URI
		}
	}
	return ""
}

// RunTSClient runs the official TypeScript SDK's client (see [NodePeers])
// against the streamable HTTP MCP server at url for tools, and returns
// what it printed per tool; it waits two minutes at most.
func RunTSClient(t testing.TB, url string, tools ...string) map[string]TSOutcome {
	t.Helper()
	node, dir := NodePeers(t)
	cmd := NodeScript(t, node, dir, tsCall, append([]string{url}, tools...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer stop.Stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("TS client: %v\n%s", err, stderr.String())
	}
	var out map[string]TSOutcome
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("TS client printed %q: %v", Clip(stdout.String()), err)
	}
	return out
}
