package mcpgo

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/internal/testenc"
	"github.com/boundhttp/boundhttp/mcpcore"
)

// TestTSClientReadsMCPGoServer: the official TypeScript client against an
// mcp-go server with the option: a typed tool's cut or linked result is
// handed to its caller (isError, the marker, the link) instead of thrown,
// and following only URIs found in content text it reads every page of a
// link to the last, the data joining byte-exact. Sabotage: a navigation
// note without the next URI stopped the client after page 1; isError left
// false made callTool throw on the cut typed result.
func TestTSClientReadsMCPGoServer(t *testing.T) {
	for _, store := range []bool{false, true} {
		l := ServerLimits{MaxResultChars: 2000}
		if store {
			l.Store = mcpcore.NewStore(0, 0)
		}
		out := testenc.RunTSClient(t, serve(t, newServer(map[string]string{}, l.Option())), "small", "large", "text")
		if o := out["small"]; o.Error != "" || o.Result.IsError || !strings.Contains(string(o.Result.StructuredContent), `"items"`) {
			t.Errorf("store %v: small typed result: %+v", store, o)
		}
		o := out["large"]
		if o.Error != "" {
			t.Fatalf("store %v: the TS client threw on a cut typed result: %s", store, o.Error)
		}
		full, _ := json.Marshal(listOut{Items: items(100)})
		if _, m := parseMarker(t, o.Text()); !o.Result.IsError || o.Result.StructuredContent != nil || m != len(full) || chars(o.Text()) > 2000 {
			t.Errorf("store %v: cut typed result: isError %v, M %d, %q", store, o.Result.IsError, m, clip(o.Text()))
		}
		if store && (o.Link() == "" || o.Data != string(full)) {
			t.Errorf("store %v: link %q read back %d bytes, want %d", store, o.Link(), len(o.Data), len(full))
		}
		if txt := out["text"]; store && (txt.Data != mixed(9000) || len(txt.Pages) < 5) {
			t.Errorf("text tool: %d pages read following the text, %d of 9000 characters, exact %v", len(txt.Pages), chars(txt.Data), txt.Data == mixed(9000))
		}
		t.Logf("store %v: the TS client got isError %v, text %q, link %q", store, o.Result.IsError, clip(o.Text()), o.Link())
	}
}
