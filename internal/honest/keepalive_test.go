package honest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/boundhttp/boundhttp/limits"
)

// thinkTime is the pause of a client between an answer and its next
// request.
const thinkTime = time.Millisecond

// TestKeepAliveUnauthorized (server side): an API that answers 401 before
// it looks at the body, as an auth layer does, to POSTs of 1-4 KiB (every
// other one chunked, with no length declared), all on one keep-alive
// connection (MaxConnsPerHost 1). Each handler checks at entry that its
// request's context is live and answers 500 if not: a request must never
// start cancelled because of what the one before it left behind. Ours must
// answer every request 401 as stock does, on no more connections. The
// client sends each request 1 ms (its think time, the workload's pacing)
// after the handler before it returned, outer layer included: a request
// that follows at once ends net/http's background read of the connection
// before anything left behind can. The Middleware runs on the default
// budget and on one with a Timeout (which sets a read deadline up front in
// streaming mode). 200 requests per side (-short), 400 (default), 10,000
// (-honest.long).
func TestKeepAliveUnauthorized(t *testing.T) {
	n := pick(200, 400, 10000)
	body := text(1, 4<<10)
	for _, bc := range []struct {
		name   string
		budget limits.Budget
		sides  []side
	}{
		{"default", limits.Budget{}, everySide},
		{"timeout", limits.Budget{Timeout: 30 * time.Second}, everySide[1:]}, // the budget is the Middleware's
	} {
		t.Run("budget="+bc.name, func(t *testing.T) {
			w := workload{
				protos:       allProtos,
				sides:        bc.sides,
				serverBudget: bc.budget,
				checkConns:   true,
				concurrent:   true, // paced by the think time
				signal:       true,
				tuneBase:     func(b *http.Transport) { b.MaxConnsPerHost = 1 },
				pass: func(proto) (http.Handler, func(*env) outcome) {
					return http.HandlerFunc(unauthorized), func(e *env) outcome {
						return unauthorizedRequests(e, body, n)
					}
				},
			}
			w.run(t)
		})
	}
}

// unauthorized answers 401 without reading the body, or 500 if the
// request's context was done at entry.
func unauthorized(w http.ResponseWriter, r *http.Request) {
	if r.Context().Err() != nil {
		http.Error(w, "the request's context was done at handler entry: "+context.Cause(r.Context()).Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="honest"`)
	http.Error(w, "unauthorized", http.StatusUnauthorized)
}

// unauthorizedRequests sends n POSTs one after the other, each once the
// handler of the one before returned and the client thought for a moment.
func unauthorizedRequests(e *env, body []byte, n int) outcome {
	var o outcome
	for i := range n {
		size := 1<<10 + i*1237%(3<<10+1) // 1-4 KiB
		var rd io.Reader = bytes.NewReader(body[:size])
		if i%2 == 1 {
			rd = struct{ io.Reader }{rd} // no length: chunked on HTTP/1.1
		}
		req, err := http.NewRequestWithContext(e.ctx, "POST", e.url+"/v1/items", rd)
		if err != nil {
			return outcome{err: err}
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer expired")
		x := e.do(req)
		o.ex = append(o.ex, x)
		if x.err == "" {
			if err := e.waitServed(); err != nil {
				o.err = err
				break
			}
		}
		time.Sleep(thinkTime)
	}
	return o
}
