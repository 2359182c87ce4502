package decoder

import (
	"errors"
	"strings"
	"testing"

	"github.com/boundhttp/boundhttp/limits"
)

// TestErrorsCarryNoBodyContent pins the trap "echoing attacker bytes into
// errors": a 530 KB object key came back whole in Error() (through the
// pointer), a 500 KB Content-Encoding header was echoed in full, and syntax
// errors quoted a raw body byte. Error() stays under 1 KiB and keeps at most
// a key's 16-byte prefix; Pointer stays exact for Go callers; Encoding holds
// one coding cut to limits.MaxEcho bytes.
func TestErrorsCarryNoBodyContent(t *testing.T) {
	t.Parallel()
	key := "IGNORE-ALL-PREV-" + strings.Repeat("instructions; ", 37_000) // ~530 KB
	check := func(name string, err error, wantPointer string) {
		t.Helper()
		var e *limits.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: err = %v, want a *limits.Error", name, err)
		}
		got := e.Error()
		if len(got) >= 1024 {
			t.Errorf("%s: len(Error()) = %d, want < 1024", name, len(got))
		}
		if strings.Contains(got, key[:17]) || strings.Contains(got, "QQQ") {
			t.Errorf("%s: Error() = %.300q carries body content", name, got)
		}
		if wantPointer != "" && e.Pointer != wantPointer {
			t.Errorf("%s: Pointer has %d bytes, want the exact %d", name, len(e.Pointer), len(wantPointer))
		}
		if len(e.Encoding) > limits.MaxEcho {
			t.Errorf("%s: len(Encoding) = %d, want at most %d", name, len(e.Encoding), limits.MaxEcho)
		}
	}
	l := limits.JSON{MaxDepth: 2, MaxStringLen: 1 << 20}
	check("depth under a huge key", CheckJSON(strings.NewReader(`{"`+key+`":[[1]]}`), l), "/"+key+"/0")
	check("syntax under a huge key", CheckJSON(strings.NewReader(`{"`+key+`":QQQ}`), l), "/"+key)
	for _, doc := range []string{`QQQ`, `{QQQ}`, `{"a"QQQ}`, `[1QQQ]`, `"\QQQ"`, "\"\x01QQQ\"", `{"a":1}QQQ`} {
		check("syntax "+doc, CheckJSON(strings.NewReader(doc), l), "")
	}

	huge := strings.Repeat("QQQ", 170_000) // ~500 KB
	for _, tt := range []struct {
		ce, stage, enc string
		layers         int
	}{
		{huge, "encoding", "", 0},
		{"gzip, " + huge, "encoding", "", 0},
		{"gzip, " + huge, "layers", "", 1},
		{strings.Repeat("gzip, ", 90_000), "layers", "gzip", 0},
	} {
		_, err := NewReader(strings.NewReader(""), tt.ce, limits.Budget{MaxLayers: tt.layers})
		if stageOf(err) != tt.stage {
			t.Errorf("Content-Encoding of %d bytes: err = %.200v, want stage %s", len(tt.ce), err, tt.stage)
			continue
		}
		check(tt.stage+" header", err, "")
		var e *limits.Error
		errors.As(err, &e)
		if tt.enc != "" && e.Encoding != tt.enc {
			t.Errorf("Content-Encoding of %d bytes: Encoding = %q, want %q", len(tt.ce), e.Encoding, tt.enc)
		}
	}
}
