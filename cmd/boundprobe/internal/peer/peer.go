// Package peer starts the servers that the probe's tests measure, on
// loopback: nginx as a reverse proxy with a body limit in front of a
// backend. It is for tests only.
package peer

import (
	"fmt"
	"testing"

	"github.com/boundhttp/boundhttp/internal/testenc"
)

// Nginx starts nginx on a loopback port as a reverse proxy to backend (a
// base URL such as http://127.0.0.1:8080) with client_max_body_size
// maxBody (nginx syntax: "1m"), from a temporary configuration, and returns
// its base URL. It skips the test when nginx is not installed, except under
// CI; nginx is stopped, by its PID, when the test ends.
func Nginx(t testing.TB, maxBody, backend string) string {
	t.Helper()
	return testenc.Nginx(t, "", fmt.Sprintf(`client_max_body_size %s;
		location / {
			proxy_pass %s;
			proxy_http_version 1.1;
		}`, maxBody, backend))
}
