package crosssdk

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/boundhttp/boundhttp/mcpcore"
)

// TestToolErrorsCappedOnBothSDKs pins the trap "an error is an answer too":
// a tool whose handler fails the ordinary way (an error of 300,000
// characters, a build log say) reached the model whole on both SDKs, the
// server's cap and the client's ceilings applying to results only. Now, on
// every pair of a server and a client of either SDK:
//   - a server with ServerLimits{MaxResultChars: 2000} answers the failure as
//     an isError result cut to 2000 characters with the error marker, the
//     same text on all four pairs;
//   - a server without caps answers a JSON-RPC error, which the client's
//     ClientLimits trims as it trims an error result: its first and last
//     5000 characters, at most MaxErrorChars (11,000) besides the SDK's own
//     prefix.
//
// Sabotage: the adapters' early return on err (as before) delivers 300,000
// characters on every pair of both halves.
func TestToolErrorsCappedOnBothSDKs(t *testing.T) {
	n := 300000
	if testing.Short() {
		n = 60000
	}
	failing := tool{name: "t", text: mixed(n), fails: true}
	var first string
	for _, srv := range sdks {
		url := serve(t, srv, &mcpcore.ServerLimits{MaxResultChars: 2000}, failing)
		for _, cl := range sdks {
			o := dial(t, cl, url, mcpcore.ClientLimits{}).call(t, "t")
			pair := srv + " server, " + cl + " client"
			if !o.IsError || utf8.RuneCountInString(o.Text) > 2000 || !strings.Contains(o.Text, "the rest of this error message was cut") {
				t.Errorf("%s, capped server: isError %v, %d characters, want an isError result of at most 2000 with the error marker",
					pair, o.IsError, utf8.RuneCountInString(o.Text))
			}
			if first == "" {
				first = o.Text
			} else if o.Text != first {
				t.Errorf("%s, capped server: text differs from the first pair's", pair)
			}
		}
	}
	for _, srv := range sdks {
		url := serve(t, srv, nil, failing)
		for _, cl := range sdks {
			err := dial(t, cl, url, mcpcore.ClientLimits{}).callErr("t")
			pair := srv + " server, " + cl + " client"
			if err == nil {
				t.Errorf("%s, uncapped server: the call succeeded, want the server's JSON-RPC error", pair)
				continue
			}
			msg := err.Error()
			if c := utf8.RuneCountInString(msg); c > mcpcore.DefaultMaxErrorChars+200 || !strings.Contains(msg, "these are its first and last 5000") {
				t.Errorf("%s, uncapped server: an error of %d characters (%.80q...), want at most %d with the client's marker",
					pair, c, msg, mcpcore.DefaultMaxErrorChars)
			}
		}
	}
}
