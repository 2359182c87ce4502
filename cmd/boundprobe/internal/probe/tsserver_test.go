package probe

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/schema"
)

// tsServer is an MCP server of the official TypeScript SDK (its low-level
// Server and the streamable HTTP transport, one session per initialize)
// behind express.json with a body limit of argv[2] bytes, listing the tools
// of argv[3]. It prints "listening PORT" once it listens on 127.0.0.1.
const tsServer = `
import { randomUUID } from "node:crypto";
import express from "express";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ListToolsRequestSchema, CallToolRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const limit = Number(process.argv[2]);
const tools = JSON.parse(process.argv[3]);
const transports = {};

function newServer() {
  const s = new Server({ name: "ts-probe-target", version: "1.0.0" }, { capabilities: { tools: {} } });
  s.setRequestHandler(ListToolsRequestSchema, async () => tools);
  s.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: "text", text: "ok" }] }));
  return s;
}

const app = express();
app.use(express.json({ limit }));
app.all("/mcp", async (req, res) => {
  const id = req.headers["mcp-session-id"];
  let t = id && transports[id];
  if (!t) {
    if (id || req.method !== "POST") {
      res.status(404).json({ jsonrpc: "2.0", error: { code: -32001, message: "unknown session" }, id: null });
      return;
    }
    t = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => { transports[sid] = t; },
    });
    t.onclose = () => { if (t.sessionId) delete transports[t.sessionId]; };
    await newServer().connect(t);
  }
  await t.handleRequest(req, res, req.body);
});
const srv = app.listen(0, "127.0.0.1", () => console.log("listening " + srv.address().port));
`

// startTSServer starts [tsServer] with a body limit and the tools/list
// result tools, and returns its MCP endpoint; node is killed, by its PID,
// when the test ends.
func startTSServer(t *testing.T, limit int64, tools string) string {
	t.Helper()
	node, dir := testenc.NodePeers(t)
	cmd := testenc.NodeScript(t, node, dir, tsServer, strconv.FormatInt(limit, 10), tools)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		port, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			t.Fatalf("node printed %q, not its port; stderr: %s", s, stderr.String())
		}
		return "http://127.0.0.1:" + port + "/mcp"
	case <-time.After(60 * time.Second): // a start-up that never ends, not a timing assertion
		t.Fatalf("node did not listen within 60s; stderr: %s", stderr.String())
	}
	return ""
}

// TestTypeScriptSDKServer probes a server of the official TypeScript SDK
// behind express.json({limit: 200000}). The SDK refuses a JSON-RPC request
// with "params": null as a parse error, so a probe that sends one in
// tools/list reads every TypeScript server as unreachable (exit 4). Here
// the probe must reach it, measure express's ceiling exactly (identity:
// 200000 bytes; gzip: 200000 decoded, as body-parser inflates before it
// counts), and check both tools: "fits" does, "too_big" does not, named
// with both numbers; exit 3.
func TestTypeScriptSDKServer(t *testing.T) {
	t.Parallel()
	const limit = 200000
	const (
		fits   = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":5000}}}`
		tooBig = `{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string","maxLength":40000}}}`
	)
	url := startTSServer(t, limit, fmt.Sprintf(`{"tools":[{"name":"fits","inputSchema":%s},{"name":"too_big","inputSchema":%s}]}`, fits, tooBig))
	code, rep, errs := probe(t, "-mcp", url)
	if code != ExitNoFit || rep == nil {
		t.Fatalf("exit %d, want %d: %s", code, ExitNoFit, errs)
	}
	checkCeiling(t, "identity", rep.Identity, limit, limit, limit+1, 40)
	if a := rep.Identity.Refusal; a == nil || a.Status != 413 || a.By != ByOther {
		t.Errorf("identity refusal %s, want express's 413", describe(a))
	}
	if g := rep.Gzip; g == nil || g.DecodedCeiling != limit || !g.Exact || g.Ceiling <= 0 || g.Ceiling >= limit {
		t.Errorf("gzip: %+v, want decoded ceiling %d exact", g, limit)
	}
	if len(rep.Tools) != 2 || rep.Fits {
		t.Fatalf("tools %+v, fits %v: want 2 tools, not all fitting", rep.Tools, rep.Fits)
	}
	for i, tc := range []struct {
		name, schema string
		fits         bool
	}{{"fits", fits, true}, {"too_big", tooBig, false}} {
		worst, err := schema.RequestWorstCase(tc.name, []byte(tc.schema), schema.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := rep.Tools[i]
		if f.Name != tc.name || f.Fits != tc.fits || f.WorstRequest != worst || f.Ceiling != limit {
			t.Errorf("tool %d: %+v, want %s fits %v, worst %d, ceiling %d", i, f, tc.name, tc.fits, worst, limit)
		}
		if !tc.fits && (!strings.Contains(f.Problem, fmt.Sprint(worst)) || !strings.Contains(f.Problem, fmt.Sprint(limit))) {
			t.Errorf("%s: problem %q does not name %d and %d", tc.name, f.Problem, worst, limit)
		}
	}
}
