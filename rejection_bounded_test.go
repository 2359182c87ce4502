package boundhttp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// TestRejectionCarriesNoBodyContent pins issue 8 item 16: a 530 KB object
// key (through the pointer) or a huge coding came back whole in a
// Rejection. Its JSON stays under 1 KiB and keeps at most a key's 16-byte
// prefix, or a coding's limits.MaxEcho-byte prefix.
func TestRejectionCarriesNoBodyContent(t *testing.T) {
	t.Parallel()
	key := "IGNORE-ALL-PREV-" + strings.Repeat("instructions; ", 37_000)
	for _, tt := range []struct {
		e    *limits.Error
		keep int // bytes of key that may appear
	}{
		{&limits.Error{Stage: limits.StageJSON, Field: "MaxDepth", Limit: 2, Observed: 3, Pointer: "/" + key}, 16},
		{&limits.Error{Stage: limits.StageEncoding, Encoding: key}, limits.MaxEcho},
		{&limits.Error{Stage: limits.StageIntegrity, Encoding: key}, limits.MaxEcho},
	} {
		e := tt.e
		j, err := json.Marshal(boundhttp.RejectionOf(e))
		if err != nil {
			t.Fatal(err)
		}
		if len(j) >= 1024 || strings.Contains(string(j), key[:tt.keep+1]) {
			t.Errorf("stage %s: Rejection JSON of %d bytes = %.300s, want < 1 KiB without the key", e.Stage, len(j), j)
		}
	}
}
