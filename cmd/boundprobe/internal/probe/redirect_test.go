package probe

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestNoRedirectFollowed: a target that redirects every request elsewhere
// gets no traffic sent to the elsewhere, probe bodies or MCP; the
// redirects are reported as answers that are not 2xx.
func TestNoRedirectFollowed(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer other.Close()
	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, other.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer redir.Close()
	code, rep, _ := probe(t, "-max-size", "64KiB", "-max-requests", "4", redir.URL)
	if code != ExitFit || rep == nil || rep.Identity.Accepted == nil || rep.Identity.Accepted.Status != http.StatusTemporaryRedirect {
		t.Errorf("exit %d, report %+v", code, rep)
	}
	if code, _, _ := probe(t, "-mcp", "-max-size", "64KiB", redir.URL); code != ExitUnreachable {
		t.Errorf("-mcp on a redirect: exit %d, want %d", code, ExitUnreachable)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the redirect's target", n)
	}
}
