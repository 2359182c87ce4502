package main

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
)

// newTestServer serves the example's handler (the Middleware in front of
// the SDK's streamable HTTP handler) on loopback until the test ends.
func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	h, err := handler(slog.New(slog.NewTextHandler(io.Discard, nil)), serverLimits)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
