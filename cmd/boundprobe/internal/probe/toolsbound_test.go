package probe

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestToolsListBoundInAll: a server whose tools/list pages are each within
// the 16 MiB bound of one answer but that go on for many pages must not
// make the probe hold up to 100 such pages (1.6 GiB): the tools of all
// pages together are bounded by the same 16 MiB. Found: 20 pages of 1 MiB
// were collected (20 MiB) and audited.
func TestToolsListBoundInAll(t *testing.T) {
	t.Parallel()
	desc := strings.Repeat("d", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			return
		}
		msg, _ := readRPC(r)
		var result string
		switch msg.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"many","version":"v1"}}`
		case "tools/list":
			var k int
			fmt.Sscan(msg.Params.Cursor, &k)
			next := ""
			if k < 19 {
				next = fmt.Sprint(k + 1)
			}
			result = fmt.Sprintf(`{"tools":[{"name":"t%d","description":"%s","inputSchema":{"type":"object","additionalProperties":false}}],"nextCursor":%q}`, k, desc, next)
		default:
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
	}))
	defer srv.Close()
	var out, errs bytes.Buffer
	code := Main(context.Background(), []string{"-pause", "0", "-mcp", "-max-size", "4KiB", "-max-requests", "3", srv.URL}, &out, &errs)
	if code != ExitUnreachable || !strings.Contains(errs.String(), "tools/list") {
		t.Errorf("exit %d, want %d with a tools/list error; stderr %q", code, ExitUnreachable, errs.String())
	}
}
