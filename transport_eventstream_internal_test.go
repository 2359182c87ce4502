package boundhttp

import (
	"mime"
	"net/http"
	"testing"
)

// TestEventStreamShortcutAgreesWithParse pins the trap of a fast path that
// answers differently from the parser it skips: isEventStream avoids
// mime.ParseMediaType when the Content-Type cannot name text/event-stream,
// and must agree with it on every value, case, parameters, spaces and
// look-alike letters (the long s and the Kelvin sign fold to s and k under
// strings.EqualFold, but ParseMediaType does not lowercase them to ASCII)
// included.
func TestEventStreamShortcutAgreesWithParse(t *testing.T) {
	for _, ct := range []string{
		"", "text/event-stream", "TEXT/EVENT-STREAM", "Text/Event-Stream; charset=utf-8",
		"  text/event-stream  ", "text/event-stream;", "text/event-streams", "text/event-stream-x",
		"application/json", "text/plain; x=event-stream", "application/event-stream",
		"text/event-\u017ftream", "text/event-stream\u212a", "text/event stream", "text/eventstream",
		"text/event-stream; q", ";text/event-stream", "event-stream", "text/event-stre",
	} {
		resp := &http.Response{Header: http.Header{"Content-Type": {ct}}}
		mt, _, _ := mime.ParseMediaType(ct)
		if got, want := isEventStream(resp), mt == "text/event-stream"; got != want {
			t.Errorf("isEventStream(%q) = %v, want %v (mime.ParseMediaType)", ct, got, want)
		}
	}
}
