package crosssdk

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// tsRead is the script of the official TypeScript client reading a link it
// did not mint: it connects to the server at argv[2] and reads the link
// argv[3] page by page, following only URIs found in the pages' text (as
// a model reads them), never _meta, and prints the data joined (the
// navigation notes left out) and the number of pages.
const tsRead = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [url, link] = process.argv.slice(2);
const client = new Client({ name: "ts-reader", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const uriRE = /mcpbound:\/\/result\/[0-9a-f]{32}(\?page=[0-9]+)?/g;
const seen = new Set();
let data = "", pages = 0, uri = link;
while (uri && pages < 1000) {
  seen.add(uri);
  const page = await client.readResource({ uri });
  pages++;
  data += page.contents.filter(c => !(c._meta && c._meta["mcpbound/navigation"])).map(c => c.text).join("");
  uri = undefined;
  for (const c of page.contents) {
    for (const m of (c.text || "").matchAll(uriRE)) {
      if (!seen.has(m[0])) { uri = uri || m[0]; }
    }
  }
}
await client.close();
process.stdout.write(JSON.stringify({ data, pages }));
`

// tsReadLink runs tsRead against the server at url for link and returns
// the data and the number of pages; it waits two minutes at most.
func tsReadLink(t *testing.T, url, link string) (string, int) {
	t.Helper()
	node, dir := testenc.NodePeers(t)
	cmd := testenc.NodeScript(t, node, dir, tsRead, url, link)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer stop.Stop()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("TS reader: %v\n%s", err, stderr.String())
	}
	var out struct {
		Data  string `json:"data"`
		Pages int    `json:"pages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("TS reader printed %q: %v", clip(stdout.String()), err)
	}
	return out.Data, out.Pages
}

// linkedText is the result of the tool "text" in the link tests: several
// pages of one- to four-byte characters at a cap of 2,000.
var linkedText = mixed(20000)

// linkLimits are the caps of the servers of the link tests, with a store
// of their own.
func linkLimits() *mcpcore.ServerLimits {
	return &mcpcore.ServerLimits{MaxResultChars: 2000, Store: mcpcore.NewStore(0, 0)}
}

// TestLinkFromMCPGoServerReadsOnEveryClient: one link minted by an mcp-go
// server with the adapter (called by the official Go SDK's client) is read
// back byte-exact by the Go SDK's client (mcpbound.ReadLink), by an mcp-go
// client with the client adapter (mcpgo.ReadLink) and by the official
// TypeScript client following the pages' text; and the TS client that
// calls the tool itself gets the marker and the link and reads it to the
// end. Sabotage: an mcp-go server that keeps nothing in its store (the
// middleware built without it) answers every reader "unknown result link".
func TestLinkFromMCPGoServerReadsOnEveryClient(t *testing.T) {
	url := serve(t, mcpGo, linkLimits(), tool{name: "text", text: linkedText})
	gc := dial(t, goSDK, url, mcpcore.ClientLimits{})
	c := gc.call(t, "text")
	if c.uri == "" {
		t.Fatalf("the mcp-go server gave the Go SDK's client no link: %q", clip(c.Text))
	}
	want := mcpcore.ServerLimits{MaxResultChars: 2000}.PageChars(len([]rune(linkedText)))
	want = (len([]rune(linkedText)) + want - 1) / want
	for name, p := range map[string]peer{goSDK: gc, mcpGo: dial(t, mcpGo, url, mcpcore.ClientLimits{})} {
		if got, err := p.readLink(c.uri); err != nil || got != linkedText {
			t.Errorf("%s client: read %d of %d bytes, byte-exact %v, %v", name, len(got), len(linkedText), got == linkedText, err)
		}
	}
	if got, pages := tsReadLink(t, url, c.uri); got != linkedText || pages != want {
		t.Errorf("TS client: %d pages (want %d), %d of %d bytes, byte-exact %v", pages, want, len(got), len(linkedText), got == linkedText)
	}
	o := testenc.RunTSClient(t, url, "text")["text"]
	if _, m := parseMarker(t, o.Text()); o.Error != "" || o.Link() == "" || m != len([]rune(linkedText)) || o.Data != linkedText || len(o.Pages) != want {
		t.Errorf("TS client's own call: error %q, link %q, M %d, %d pages, byte-exact %v", o.Error, o.Link(), m, len(o.Pages), o.Data == linkedText)
	}
}

// TestLinkFromGoSDKServerReadsOnMCPGoClient: a link minted by a server of
// the official Go SDK with mcpbound.ServerLimits, called by an mcp-go
// client with the client adapter, is read back byte-exact by that client
// (mcpgo.ReadLink, which follows the result's _meta.next this server sets)
// and by the TypeScript client. Sabotage: an mcpgo.ReadLink that stops at
// the first page fails the comparison.
func TestLinkFromGoSDKServerReadsOnMCPGoClient(t *testing.T) {
	url := serve(t, goSDK, linkLimits(), tool{name: "text", text: linkedText})
	mc := dial(t, mcpGo, url, mcpcore.ClientLimits{})
	c := mc.call(t, "text")
	if c.uri == "" {
		t.Fatalf("the go-sdk server gave the mcp-go client no link: %q", clip(c.Text))
	}
	if got, err := mc.readLink(c.uri); err != nil || got != linkedText {
		t.Errorf("mcp-go client: read %d of %d bytes, byte-exact %v, %v", len(got), len(linkedText), got == linkedText, err)
	}
	if got, _ := tsReadLink(t, url, c.uri); got != linkedText {
		t.Errorf("TS client: %d of %d bytes, byte-exact %v", len(got), len(linkedText), got == linkedText)
	}
}
