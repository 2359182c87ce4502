package boundhttp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/boundhttp/boundhttp"
	"github.com/boundhttp/boundhttp/limits"
)

// A handler writes more than the response cap before anything was sent:
// the write fails, and the client gets a 500 problem instead.
func ExampleMiddlewareConfig_maxResponseBytes() {
	mw, err := boundhttp.NewMiddleware(boundhttp.MiddlewareConfig{
		MaxResponseBytes: 16,
		Logger:           slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.WriteString(w, "a response of more than sixteen bytes")
		var le *limits.Error
		if errors.As(err, &le) {
			fmt.Println("handler:", le.Stage, errors.Is(err, limits.ErrTooLarge))
		}
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	var p boundhttp.Problem
	json.Unmarshal(rec.Body.Bytes(), &p)
	fmt.Println("client:", rec.Code, rec.Header().Get("Content-Type"))
	fmt.Println("problem:", p.Stage, p.Limit, p.Observed)
	// Output:
	// handler: response true
	// client: 500 application/problem+json
	// problem: response 16 37
}
